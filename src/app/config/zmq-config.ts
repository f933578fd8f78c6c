// The `--zmq` flag and the `zmq:` list of the configuration file: ZMQ KV-event streams to subscribe to, one schema
// (zmqEntry) for both — the flag's options are the file's keys spelled short.
//   --zmq ctx0=tcp://10.0.0.5:5557,engine=vllm,ranks=2,replay=tcp://10.0.0.5:5600,topic=kv,hash=sha256_cbor,seed=0
//   zmq: [{id: ctx0, endpoint: "tcp://10.0.0.5:5557", engine: vllm, ranks: 2, replay_endpoint: "tcp://10.0.0.5:5600", topic: kv,
//          hash_algo: sha256_cbor, python_hash_seed: "0"}]
// endpoint and replay_endpoint are rank 0's; rank r is at port + r (the publishers' base-port + rank layout).
// hash / seed (vLLM only) are the workers' --prefix-caching-hash-algo and PYTHONHASHSEED, exactly as set: with
// sha256_cbor kvsentinel recomputes their block hashes (docs/event-streams.md "vLLM block hashes").
// hit / hit_tier (vLLM, SGLang): gpu (default), cpu or disk — the slowest medium the workers load reused blocks from;
// blocks held only on slower media are resident in worker truth but not a hit for the oracle or the router's view.
import type { ZmqStreamSpec } from '../../sources/zmq/zmq-events-source.js';
import { endpointProblem } from '../../sources/zmq/zmq-endpoints.js';
import { ConfigError } from './config-error.js';
import * as values from './config-values.js';
import { checkAt, mapping, readFlag, required, value } from './schema-kit.js';
import * as zmqValues from './zmq-values.js';

/** hit_tier: the slowest medium a request reuses blocks from (vLLM's offloading connector, SGLang's HiCache) */
const HIT_TIERS = { gpu: 0, cpu: 1, disk: 2 } as const;

const hitTier = values.oneOf(Object.keys(HIT_TIERS) as (keyof typeof HIT_TIERS)[], (v) => JSON.stringify(v));

/** the endpoint to connect to (rank 0's), checked with the ranks beside it */
function connectEndpoint(v: string, ranks: number): string {
  const problem = endpointProblem(v, ranks);
  return problem === null ? v : values.problem(`'${v}': ${problem}`);
}

const endpointText = zmqValues.text((v) => `${JSON.stringify(v)} is not an endpoint (tcp://HOST:PORT)`);

export const zmqEntry = mapping(
  {
    id: required(values.serverId),
    endpoint: required(endpointText),
    replay_endpoint: value(zmqValues.orNull(endpointText), null),
    engine: value(zmqValues.engine, 'trtllm'),
    ranks: value(zmqValues.rankCount, 1),
    topic: value(zmqValues.topic, ''),
    hash_algo: value(zmqValues.orNull(zmqValues.vllmHashAlgo), null),
    python_hash_seed: value(zmqValues.orNull(zmqValues.pythonHashSeed), null),
    hit_tier: value(zmqValues.orNull(hitTier), null),
  },
  'expected a mapping with id, endpoint',
).transform((e, ctx): ZmqStreamSpec => {
  const hashing = checkAt(ctx, 'hash_algo', () => zmqValues.vllmHashing(e.engine, e.hash_algo, e.python_hash_seed));
  const hit = e.hit_tier;
  if (hit !== null && e.engine === 'trtllm')
    checkAt(ctx, 'hit_tier', () =>
      values.problem("TensorRT-LLM's tables count every level it reuses; hit_tier is for vllm and sglang"),
    );
  const replay = e.replay_endpoint;
  return {
    id: e.id,
    endpoint: checkAt(ctx, 'endpoint', () => connectEndpoint(e.endpoint, e.ranks)),
    replay: replay === null ? null : checkAt(ctx, 'replay_endpoint', () => connectEndpoint(replay, e.ranks)),
    engine: e.engine,
    ranks: e.ranks,
    topic: e.topic,
    ...(hashing !== null ? { vllmHashing: hashing } : {}),
    ...(hit !== null ? { hitLevel: HIT_TIERS[hit] } : {}),
  };
});

/** the flag's option → the file's key */
const FLAG_OPTIONS = {
  replay: 'replay_endpoint',
  engine: 'engine',
  ranks: 'ranks',
  topic: 'topic',
  hash: 'hash_algo',
  seed: 'python_hash_seed',
  hit: 'hit_tier',
} as const;

/** `ID=ENDPOINT[,replay=ENDPOINT][,engine=trtllm|vllm|sglang][,ranks=N][,topic=T][,hash=ALGO][,seed=PYTHONHASHSEED][,hit=gpu|cpu|disk]` */
export function parseZmqFlag(text: string): ZmqStreamSpec {
  const where = `--zmq '${text}'`;
  const eq = text.indexOf('=');
  if (eq <= 0)
    throw new ConfigError(
      `${where}: expected ID=tcp://HOST:PORT[,replay=tcp://HOST:PORT][,engine=trtllm|vllm|sglang][,ranks=N][,topic=T][,hash=sha256_cbor][,seed=N][,hit=gpu|cpu|disk]`,
    );
  const [endpoint, ...options] = text.slice(eq + 1).split(',');
  const raw = { id: text.slice(0, eq), endpoint, ...zmqValues.flagOptions(where, options, FLAG_OPTIONS) };
  // the file's hit_tier keeps its name in the flag's errors (hit= is its short spelling)
  return readFlag(zmqEntry, raw, where, { replay_endpoint: 'replay', hash_algo: 'hash', python_hash_seed: 'seed' });
}

/** Each stream once; its id may be a relay's or a --ctx worker's (the same server seen two ways). */
export function checkZmqUnique(specs: readonly ZmqStreamSpec[]): void {
  const seen = new Set<string>();
  for (const s of specs) {
    if (seen.has(s.id)) throw new ConfigError(`zmq ${s.id}: server id '${s.id}' has two streams`);
    seen.add(s.id);
  }
}
