// The `--zmq-bind` flag and the `zmq_bind:` list of the configuration file: sockets kvsentinel binds for KV-event
// publishers that connect (vLLM and SGLang without a wildcard endpoint, llm-d's central mode):
//   --zmq-bind tcp://*:5557,engine=vllm,ranks=2,topic=kv@,hash=sha256_cbor,seed=0[,forward=tcp://127.0.0.1:5558]
//   zmq_bind: [{endpoint: "tcp://*:5557", engine: vllm, ranks: 2, topic: "kv@", hash_algo: sha256_cbor, python_hash_seed: "0"}]
// The endpoint is rank 0's bind address; rank r binds port + r (a connecting publisher offsets its port by its DP
// rank). Servers are named by each message's topic (llm-d's kv@<pod>@<model>, else the whole topic). `forward` is
// rank 0's address of the consumer whose socket kvsentinel took (rank r at port + r); every message goes on to it.
import { STREAM_ENGINES, isStreamEngine } from '../../core/stream/stream-engine.js';
import type { ZmqBindSpec } from '../../sources/zmq/zmq-bind-source.js';
import { ConfigError } from './config-error.js';
import { vllmHashing } from './zmq-config.js';
import { endpointProblem } from '../../sources/zmq/zmq-endpoints.js';

const KEYS = ['endpoint', 'engine', 'ranks', 'topic', 'hash_algo', 'python_hash_seed', 'forward'] as const;
const FLAG_KEYS = ['engine', 'ranks', 'topic', 'hash', 'seed', 'forward'] as const;
const MAX_RANKS = 256;

function fail(where: string, message: string): never {
  throw new ConfigError(`${where}: ${message}`);
}

function bindEndpoint(where: string, v: unknown, ranks: number): string {
  if (typeof v !== 'string') return fail(where, `${JSON.stringify(v)} is not an address to bind (tcp://*:PORT)`);
  if (v.startsWith('ipc://')) return v.length > 'ipc://'.length ? v : fail(where, `'${v}': an empty path`);
  const m = /^tcp:\/\/(\*|\[[^\]]+\]|[^:/]+):(\d+)$/.exec(v);
  if (m === null) return fail(where, `'${v}': expected tcp://HOST:PORT (HOST * binds every interface) or ipc://PATH`);
  const port = Number(m[2]);
  if (port < 1 || port + ranks - 1 > 65_535)
    fail(where, `'${v}': ports ${port}..${port + ranks - 1} (base port + rank) are not all in 1..65535`);
  return v;
}

function forwardEndpoint(where: string, v: unknown, ranks: number): string {
  if (typeof v !== 'string') return fail(where, `${JSON.stringify(v)} is not an address to connect to`);
  if (/^tcp:\/\/(\*|0\.0\.0\.0|\[::\]):/.test(v))
    fail(where, `'${v}' is a bind address; give the host of the consumer to pass messages on to`);
  const problem = endpointProblem(v, ranks);
  return problem === null ? v : fail(where, `'${v}': ${problem}`);
}

function spec(
  where: string,
  raw: {
    endpoint: unknown;
    engine?: unknown;
    ranks?: unknown;
    topic?: unknown;
    hash?: unknown;
    seed?: unknown;
    forward?: unknown;
  },
): ZmqBindSpec {
  const engine = raw.engine ?? 'vllm';
  if (!isStreamEngine(engine))
    fail(`${where} engine`, `${JSON.stringify(engine)} is not one of ${STREAM_ENGINES.join(', ')}`);
  const ranks = typeof raw.ranks === 'string' && /^\d+$/.test(raw.ranks) ? Number(raw.ranks) : (raw.ranks ?? 1);
  if (typeof ranks !== 'number' || !Number.isSafeInteger(ranks) || ranks < 1 || ranks > MAX_RANKS)
    fail(`${where} ranks`, `${JSON.stringify(raw.ranks)} is not a rank count (1..${MAX_RANKS})`);
  const topic = raw.topic ?? '';
  if (typeof topic !== 'string') fail(`${where} topic`, `${JSON.stringify(topic)} is not a string`);
  const hashing = vllmHashing(where, engine, raw.hash, raw.seed);
  const endpoint = bindEndpoint(`${where} endpoint`, raw.endpoint, ranks);
  const forward = raw.forward === undefined ? undefined : forwardEndpoint(`${where} forward`, raw.forward, ranks);
  if (forward === endpoint) fail(`${where} forward`, `'${forward}' is the address kvsentinel binds`);
  return {
    endpoint,
    engine,
    ranks,
    topic,
    ...(hashing !== null ? { vllmHashing: hashing } : {}),
    ...(forward !== undefined ? { forward } : {}),
  };
}

/** `ENDPOINT[,engine=trtllm|vllm|sglang][,ranks=N][,topic=T][,hash=ALGO][,seed=PYTHONHASHSEED][,forward=ADDRESS]` */
export function parseZmqBindFlag(text: string): ZmqBindSpec {
  const where = `--zmq-bind '${text}'`;
  const [first, ...options] = text.split(',');
  const raw: Record<string, string> = {};
  for (const option of options) {
    const i = option.indexOf('=');
    const key = i > 0 ? option.slice(0, i) : option;
    if (!(FLAG_KEYS as readonly string[]).includes(key) || i <= 0)
      fail(where, `'${option}' is not engine=, ranks=, topic=, hash=, seed= or forward=`);
    if (key in raw) fail(where, `${key}= given twice`);
    raw[key] = option.slice(i + 1);
  }
  return spec(where, { endpoint: first, ...raw });
}

/** The file's `zmq_bind:` list. */
export function parseZmqBindList(where: string, list: readonly unknown[]): ZmqBindSpec[] {
  return list.map((item, i) => {
    const at = `${where}[${i}]`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) fail(at, 'expected a mapping with endpoint');
    const r = item as Record<string, unknown>;
    for (const key of Object.keys(r))
      if (!(KEYS as readonly string[]).includes(key))
        fail(`${at}.${key}`, `unknown key (expected one of ${KEYS.join(', ')})`);
    return spec(at, {
      endpoint: r['endpoint'],
      engine: r['engine'],
      ranks: r['ranks'],
      topic: r['topic'],
      hash: r['hash_algo'],
      seed: r['python_hash_seed'],
      forward: r['forward'],
    });
  });
}

/** Each address bound once (a second bind of one port fails at start). */
export function checkZmqBindUnique(specs: readonly ZmqBindSpec[]): void {
  const seen = new Set<string>();
  for (const s of specs) {
    if (seen.has(s.endpoint)) fail(`zmq_bind ${s.endpoint}`, 'bound twice');
    seen.add(s.endpoint);
  }
}
