// The `--zmq` flag and the `zmq:` list of the configuration file: ZMQ KV-event streams to subscribe to.
//   --zmq ctx0=tcp://10.0.0.5:5557,engine=vllm,ranks=2,replay=tcp://10.0.0.5:5600,topic=kv,hash=sha256_cbor,seed=0
//   zmq: [{id: ctx0, endpoint: "tcp://10.0.0.5:5557", engine: vllm, ranks: 2, replay_endpoint: "tcp://10.0.0.5:5600", topic: kv,
//          hash_algo: sha256_cbor, python_hash_seed: "0"}]
// endpoint and replay_endpoint are rank 0's; rank r is at port + r (the publishers' base-port + rank layout).
// hash / seed (vLLM only) are the workers' --prefix-caching-hash-algo and PYTHONHASHSEED, exactly as set: with
// sha256_cbor kvsentinel recomputes their block hashes (docs/event-streams.md "vLLM block hashes").
// hit / hit_tier (vLLM, SGLang): gpu (default), cpu or disk — the slowest medium the workers load reused blocks from;
// blocks held only on slower media are resident in worker truth but not a hit for the oracle or the router's view.
import { VLLM_HASH_ALGOS, isVllmHashAlgo } from '../../core/hashing/vllm-block-hash.js';
import { STREAM_ENGINES, isStreamEngine } from '../../core/stream/stream-engine.js';
import type { VllmHashing } from '../../core/stream/vllm-hash-checker.js';
import type { ZmqStreamSpec } from '../../sources/zmq/zmq-events-source.js';
import { endpointProblem } from '../../sources/zmq/zmq-endpoints.js';
import { ConfigError } from './config-error.js';

const ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const KEYS = [
  'id',
  'endpoint',
  'replay_endpoint',
  'engine',
  'ranks',
  'topic',
  'hash_algo',
  'python_hash_seed',
  'hit_tier',
] as const;
const FLAG_KEYS = ['replay', 'engine', 'ranks', 'topic', 'hash', 'seed', 'hit'] as const;
/** hit_tier: the slowest medium a request reuses blocks from (vLLM's offloading connector, SGLang's HiCache) */
const HIT_TIERS = { gpu: 0, cpu: 1, disk: 2 } as const;
/** attention-DP sizes beyond this are a typo, not a deployment */
const MAX_RANKS = 256;

function fail(where: string, message: string): never {
  throw new ConfigError(`${where}: ${message}`);
}

function endpoint(where: string, v: unknown, ranks: number): string {
  if (typeof v !== 'string') return fail(where, `${JSON.stringify(v)} is not an endpoint (tcp://HOST:PORT)`);
  const problem = endpointProblem(v, ranks);
  if (problem !== null) fail(where, `'${v}': ${problem}`);
  return v;
}

export function vllmHashing(where: string, engine: string, algo: unknown, seed: unknown): VllmHashing | null {
  if ((algo === undefined || algo === null) && (seed === undefined || seed === null)) return null;
  if (engine !== 'vllm') fail(`${where} hash`, `the hash algorithm and seed are vLLM's (engine=vllm), not ${engine}'s`);
  if (algo !== undefined && algo !== null && !isVllmHashAlgo(algo))
    fail(
      `${where} hash`,
      `${JSON.stringify(algo)} is not one of ${VLLM_HASH_ALGOS.join(', ')} (vLLM's --prefix-caching-hash-algo)`,
    );
  const seedText = typeof seed === 'number' && Number.isSafeInteger(seed) && seed >= 0 ? String(seed) : seed;
  if (seedText !== undefined && seedText !== null && (typeof seedText !== 'string' || seedText.length === 0))
    fail(
      `${where} seed`,
      `${JSON.stringify(seed)} is not a PYTHONHASHSEED value (the workers' environment string, e.g. "0")`,
    );
  return {
    algo: algo === undefined || algo === null ? null : algo,
    seed: seedText === undefined || seedText === null ? null : seedText,
  };
}

function spec(
  where: string,
  raw: {
    id: unknown;
    endpoint: unknown;
    replay?: unknown;
    engine?: unknown;
    ranks?: unknown;
    topic?: unknown;
    hash?: unknown;
    seed?: unknown;
    hit?: unknown;
  },
): ZmqStreamSpec {
  if (typeof raw.id !== 'string' || !ID.test(raw.id))
    fail(`${where} id`, `${JSON.stringify(raw.id)} is not a server id (letters, digits, '_', '.', '-'; at most 64)`);
  const engine = raw.engine ?? 'trtllm';
  if (!isStreamEngine(engine))
    fail(`${where} engine`, `${JSON.stringify(engine)} is not one of ${STREAM_ENGINES.join(', ')}`);
  const ranksValue = typeof raw.ranks === 'string' && /^\d+$/.test(raw.ranks) ? Number(raw.ranks) : (raw.ranks ?? 1);
  if (typeof ranksValue !== 'number' || !Number.isSafeInteger(ranksValue) || ranksValue < 1 || ranksValue > MAX_RANKS)
    fail(`${where} ranks`, `${JSON.stringify(raw.ranks)} is not a rank count (1..${MAX_RANKS})`);
  const topic = raw.topic ?? '';
  if (typeof topic !== 'string') fail(`${where} topic`, `${JSON.stringify(topic)} is not a string`);
  const hashing = vllmHashing(where, engine, raw.hash, raw.seed);
  const hitLevel = hitTier(where, engine, raw.hit);
  return {
    id: raw.id,
    endpoint: endpoint(`${where} endpoint`, raw.endpoint, ranksValue),
    replay:
      raw.replay === undefined || raw.replay === null ? null : endpoint(`${where} replay`, raw.replay, ranksValue),
    engine: engine,
    ranks: ranksValue,
    topic,
    ...(hashing !== null ? { vllmHashing: hashing } : {}),
    ...(hitLevel !== null ? { hitLevel } : {}),
  };
}

function hitTier(where: string, engine: string, v: unknown): number | null {
  if (v === undefined || v === null) return null;
  if (engine === 'trtllm')
    fail(`${where} hit_tier`, "TensorRT-LLM's tables count every level it reuses; hit_tier is for vllm and sglang");
  if (typeof v !== 'string' || !Object.hasOwn(HIT_TIERS, v))
    fail(`${where} hit_tier`, `${JSON.stringify(v)} is not one of ${Object.keys(HIT_TIERS).join(', ')}`);
  return HIT_TIERS[v as keyof typeof HIT_TIERS];
}

/** `ID=ENDPOINT[,replay=ENDPOINT][,engine=trtllm|vllm|sglang][,ranks=N][,topic=T][,hash=ALGO][,seed=PYTHONHASHSEED][,hit=gpu|cpu|disk]` */
export function parseZmqFlag(text: string): ZmqStreamSpec {
  const where = `--zmq '${text}'`;
  const eq = text.indexOf('=');
  if (eq <= 0)
    fail(
      where,
      'expected ID=tcp://HOST:PORT[,replay=tcp://HOST:PORT][,engine=trtllm|vllm|sglang][,ranks=N][,topic=T][,hash=sha256_cbor][,seed=N][,hit=gpu|cpu|disk]',
    );
  const [first, ...options] = text.slice(eq + 1).split(',');
  const raw: Record<string, string> = {};
  for (const option of options) {
    const i = option.indexOf('=');
    const key = i > 0 ? option.slice(0, i) : option;
    if (!(FLAG_KEYS as readonly string[]).includes(key) || i <= 0)
      fail(where, `'${option}' is not replay=, engine=, ranks=, topic=, hash=, seed= or hit=`);
    if (key in raw) fail(where, `${key}= given twice`);
    raw[key] = option.slice(i + 1);
  }
  return spec(where, { id: text.slice(0, eq), endpoint: first, ...raw });
}

/** The file's `zmq:` list. */
export function parseZmqList(where: string, list: readonly unknown[]): ZmqStreamSpec[] {
  return list.map((item, i) => {
    const at = `${where}[${i}]`;
    if (typeof item !== 'object' || item === null || Array.isArray(item))
      fail(at, 'expected a mapping with id, endpoint');
    const r = item as Record<string, unknown>;
    for (const key of Object.keys(r))
      if (!(KEYS as readonly string[]).includes(key))
        fail(`${at}.${key}`, `unknown key (expected one of ${KEYS.join(', ')})`);
    return spec(at, {
      id: r['id'],
      endpoint: r['endpoint'],
      replay: r['replay_endpoint'],
      engine: r['engine'],
      ranks: r['ranks'],
      topic: r['topic'],
      hash: r['hash_algo'],
      seed: r['python_hash_seed'],
      hit: r['hit_tier'],
    });
  });
}

/** Each stream once; its id may be a relay's or a --ctx worker's (the same server seen two ways). */
export function checkZmqUnique(specs: readonly ZmqStreamSpec[]): void {
  const seen = new Set<string>();
  for (const s of specs) {
    if (seen.has(s.id)) fail(`zmq ${s.id}`, `server id '${s.id}' has two streams`);
    seen.add(s.id);
  }
}
