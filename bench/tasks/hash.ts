// Child task: hash an LCG token stream in blocks with the project's hasher (WebAssembly token loop), the same
// chain over its JavaScript fallback loop, or the BigInt reference.
import { hashV1Chain } from '../../src/core/hashing/index.js';
import { mul64 } from '../../src/core/hashing/u64.js';
import { mixTokensJs } from '../../src/core/hashing/v1-token-mix.js';
import { bigIntV1Chain } from '../lib/v1-bigint-reference.js';
import { chainChecksum, lcgTokens } from '../lib/workload.js';

export interface HashParams {
  readonly impl: 'project' | 'js-fallback' | 'bigint';
  readonly tokens: number;
  readonly block: number;
  readonly seed: number;
  readonly reps: number;
  readonly warmupReps: number;
}

export interface HashResult {
  readonly tokens: number;
  readonly seconds: number[];
  /** CPU time of the process per rep (user + system) */
  readonly cpuSeconds: number[];
  readonly xor: string;
  readonly last: string;
}

const LOW_WORD = new Uint32Array(new BigUint64Array([1n]).buffer)[0] === 1 ? 0 : 1;

/** hashV1Chain without salt or lora, but with the JavaScript token loop the project falls back to. */
function jsFallbackChain(tokens: Uint32Array, blockSize: number): BigUint64Array {
  const count = Math.ceil(tokens.length / blockSize);
  const out = new BigUint64Array(count);
  const halves = new Uint32Array(out.buffer);
  const t = new Uint32Array(2);
  let hi = 0;
  let lo = 0;
  for (let b = 0; b < count; b++) {
    const start = b * blockSize;
    const end = Math.min(start + blockSize, tokens.length);
    mul64(hi, lo, 0xbf58476d, 0x1ce4e5b9, t); // seed = len ^ (parent * P)
    mixTokensJs(tokens, start, end, t[0]!, (t[1]! ^ (end - start)) >>> 0, t);
    hi = t[0]!;
    lo = t[1]!;
    halves[2 * b + LOW_WORD] = lo;
    halves[2 * b + 1 - LOW_WORD] = hi;
  }
  return out;
}

export function runHash(params: HashParams): HashResult {
  const tokens = lcgTokens(params.tokens, params.seed);
  const chain =
    params.impl === 'bigint' ? bigIntV1Chain : params.impl === 'js-fallback' ? jsFallbackChain : hashV1Chain;
  let hashes = chain(tokens, params.block);
  for (let i = 0; i < params.warmupReps; i++) hashes = chain(tokens, params.block);
  const seconds: number[] = [];
  const cpuSeconds: number[] = [];
  for (let r = 0; r < params.reps; r++) {
    const cpu = process.cpuUsage();
    const start = performance.now();
    hashes = chain(tokens, params.block);
    seconds.push((performance.now() - start) / 1000);
    const used = process.cpuUsage(cpu);
    cpuSeconds.push((used.user + used.system) / 1e6);
  }
  return { tokens: params.tokens, seconds, cpuSeconds, ...chainChecksum(hashes) };
}
