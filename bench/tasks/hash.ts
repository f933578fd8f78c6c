// Child task: hash an LCG token stream in blocks with the project's hasher or the BigInt reference.
import { hashV1Chain } from '../../src/core/hashing/index.js';
import { bigIntV1Chain } from '../lib/v1-bigint-reference.js';
import { chainChecksum, lcgTokens } from '../lib/workload.js';

export interface HashParams {
  readonly impl: 'uint32-halves' | 'bigint';
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

export function runHash(params: HashParams): HashResult {
  const tokens = lcgTokens(params.tokens, params.seed);
  const chain = params.impl === 'bigint' ? bigIntV1Chain : hashV1Chain;
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
