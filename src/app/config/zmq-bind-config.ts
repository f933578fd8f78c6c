// The `--zmq-bind` flag and the `zmq_bind:` list of the configuration file: sockets kvsentinel binds for KV-event
// publishers that connect (vLLM and SGLang without a wildcard endpoint, llm-d's central mode), one schema
// (zmqBindEntry) for both:
//   --zmq-bind tcp://*:5557,engine=vllm,ranks=2,topic=kv@,hash=sha256_cbor,seed=0[,forward=tcp://127.0.0.1:5558]
//   zmq_bind: [{endpoint: "tcp://*:5557", engine: vllm, ranks: 2, topic: "kv@", hash_algo: sha256_cbor, python_hash_seed: "0"}]
// The endpoint is rank 0's bind address; rank r binds port + r (a connecting publisher offsets its port by its DP
// rank). Servers are named by each message's topic (llm-d's kv@<pod>@<model>, else the whole topic). `forward` is
// rank 0's address of the consumer whose socket kvsentinel took (rank r at port + r); every message goes on to it.
import type { ZmqBindSpec } from '../../sources/zmq/zmq-bind-source.js';
import { endpointProblem } from '../../sources/zmq/zmq-endpoints.js';
import { ConfigError } from './config-error.js';
import * as values from './config-values.js';
import { checkAt, mapping, readFlag, required, value } from './schema-kit.js';
import * as zmqValues from './zmq-values.js';

function bindEndpoint(v: string, ranks: number): string {
  if (v.startsWith('ipc://')) return v.length > 'ipc://'.length ? v : values.problem(`'${v}': an empty path`);
  const m = /^tcp:\/\/(\*|\[[^\]]+\]|[^:/]+):(\d+)$/.exec(v);
  if (m === null)
    return values.problem(`'${v}': expected tcp://HOST:PORT (HOST * binds every interface) or ipc://PATH`);
  const port = Number(m[2]);
  if (port < 1 || port + ranks - 1 > 65_535)
    values.problem(`'${v}': ports ${port}..${port + ranks - 1} (base port + rank) are not all in 1..65535`);
  return v;
}

function forwardEndpoint(v: string, ranks: number, bound: string): string {
  if (/^tcp:\/\/(\*|0\.0\.0\.0|\[::\]):/.test(v))
    values.problem(`'${v}' is a bind address; give the host of the consumer to pass messages on to`);
  const problem = endpointProblem(v, ranks);
  if (problem !== null) values.problem(`'${v}': ${problem}`);
  return v === bound ? values.problem(`'${v}' is the address kvsentinel binds`) : v;
}

export const zmqBindEntry = mapping(
  {
    endpoint: required(zmqValues.text((v) => `${JSON.stringify(v)} is not an address to bind (tcp://*:PORT)`)),
    engine: value(zmqValues.engine, 'vllm'),
    ranks: value(zmqValues.rankCount, 1),
    topic: value(zmqValues.topic, ''),
    hash_algo: value(zmqValues.orNull(zmqValues.vllmHashAlgo), null),
    python_hash_seed: value(zmqValues.orNull(zmqValues.pythonHashSeed), null),
    forward: value(zmqValues.text((v) => `${JSON.stringify(v)} is not an address to connect to`)),
  },
  'expected a mapping with endpoint',
).transform((e, ctx): ZmqBindSpec => {
  const hashing = checkAt(ctx, 'hash_algo', () => zmqValues.vllmHashing(e.engine, e.hash_algo, e.python_hash_seed));
  const endpoint = checkAt(ctx, 'endpoint', () => bindEndpoint(e.endpoint, e.ranks));
  const forward = e.forward;
  return {
    endpoint,
    engine: e.engine,
    ranks: e.ranks,
    topic: e.topic,
    ...(hashing !== null ? { vllmHashing: hashing } : {}),
    ...(forward !== undefined
      ? { forward: checkAt(ctx, 'forward', () => forwardEndpoint(forward, e.ranks, endpoint)) }
      : {}),
  };
});

/** the flag's option → the file's key */
const FLAG_OPTIONS = {
  engine: 'engine',
  ranks: 'ranks',
  topic: 'topic',
  hash: 'hash_algo',
  seed: 'python_hash_seed',
  forward: 'forward',
} as const;

/** `ENDPOINT[,engine=trtllm|vllm|sglang][,ranks=N][,topic=T][,hash=ALGO][,seed=PYTHONHASHSEED][,forward=ADDRESS]` */
export function parseZmqBindFlag(text: string): ZmqBindSpec {
  const where = `--zmq-bind '${text}'`;
  const [endpoint, ...options] = text.split(',');
  const raw = { endpoint, ...zmqValues.flagOptions(where, options, FLAG_OPTIONS) };
  return readFlag(zmqBindEntry, raw, where, { hash_algo: 'hash', python_hash_seed: 'seed' });
}

/** Each address bound once (a second bind of one port fails at start). */
export function checkZmqBindUnique(specs: readonly ZmqBindSpec[]): void {
  const seen = new Set<string>();
  for (const s of specs) {
    if (seen.has(s.endpoint)) throw new ConfigError(`zmq_bind ${s.endpoint}: bound twice`);
    seen.add(s.endpoint);
  }
}
