// The value grammars both ZMQ schemas share (zmq-config.ts: streams to subscribe to, zmq-bind-config.ts: sockets to
// bind), and the reading of a ZMQ flag's `,key=value` options into the file's keys.
import { VLLM_HASH_ALGOS, isVllmHashAlgo, type VllmHashAlgo } from '../../core/hashing/vllm-block-hash.js';
import { STREAM_ENGINES, isStreamEngine, type StreamEngine } from '../../core/stream/stream-engine.js';
import type { VllmHashing } from '../../core/stream/vllm-hash-checker.js';
import { ConfigError } from './config-error.js';
import * as values from './config-values.js';
import type { ValueReader } from './config-values.js';

/** attention-DP sizes beyond this are a typo, not a deployment */
const MAX_RANKS = 256;

/** null is absent (the file may write `key: null`) */
export function orNull<T>(read: ValueReader<T>): ValueReader<T | null> {
  return (v) => (v === null ? null : read(v));
}

/** a text, else `notText(v)` */
export function text(notText: (v: unknown) => string): ValueReader<string> {
  return (v) => (typeof v === 'string' ? v : values.problem(notText(v)));
}

export const engine: ValueReader<StreamEngine> = (v) =>
  isStreamEngine(v) ? v : values.problem(`${JSON.stringify(v)} is not one of ${STREAM_ENGINES.join(', ')}`);

export const rankCount: ValueReader<number> = (v) => {
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 1 && n <= MAX_RANKS
    ? n
    : values.problem(`${JSON.stringify(v)} is not a rank count (1..${MAX_RANKS})`);
};

export const topic: ValueReader<string> = text((v) => `${JSON.stringify(v)} is not a string`);

export const vllmHashAlgo: ValueReader<VllmHashAlgo> = (v) =>
  isVllmHashAlgo(v)
    ? v
    : values.problem(
        `${JSON.stringify(v)} is not one of ${VLLM_HASH_ALGOS.join(', ')} (vLLM's --prefix-caching-hash-algo)`,
      );

/** the workers' environment string, exactly as set (a YAML number is its decimal text) */
export const pythonHashSeed: ValueReader<string> = (v) => {
  const seed = typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? String(v) : v;
  return typeof seed === 'string' && seed.length > 0
    ? seed
    : values.problem(`${JSON.stringify(v)} is not a PYTHONHASHSEED value (the workers' environment string, e.g. "0")`);
};

/** the hashing stated for a stream's workers: vLLM's only; null when neither the algorithm nor the seed is given */
export function vllmHashing(
  streamEngine: StreamEngine,
  algo: VllmHashing['algo'],
  seed: VllmHashing['seed'],
): VllmHashing | null {
  if (algo === null && seed === null) return null;
  if (streamEngine !== 'vllm')
    values.problem(`the hash algorithm and seed are vLLM's (engine=vllm), not ${streamEngine}'s`);
  return { algo, seed };
}

/** A flag's `key=value` options as the file's keys (`keys`: option → key); an unknown or repeated one is refused. */
export function flagOptions(
  where: string,
  options: readonly string[],
  keys: Readonly<Record<string, string>>,
): Record<string, string> {
  const out: Record<string, string> = {};
  const known = Object.keys(keys);
  for (const option of options) {
    const i = option.indexOf('=');
    const name = i > 0 ? option.slice(0, i) : option;
    if (i <= 0 || !Object.hasOwn(keys, name))
      throw new ConfigError(
        `${where}: '${option}' is not ${known
          .slice(0, -1)
          .map((k) => `${k}=`)
          .join(', ')} or ${known.at(-1)}=`,
      );
    const key = keys[name]!;
    if (key in out) throw new ConfigError(`${where}: ${name}= given twice`);
    out[key] = option.slice(i + 1);
  }
  return out;
}
