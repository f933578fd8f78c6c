// The oracle of a request the relay could only place once the worker answered: text and chat requests carry no
// token ids, but the CTX response carries the worker's own (`prompt_token_ids`). The worker-truth oracle of docs/design.md
// §4 is then computed when the outcome arrives, with one care: the chosen server has meanwhile stored this very
// request's blocks, so its share is what it reported reusing (cached_tokens, the worker's own measure of what it
// held), never its table; every other server's share is its table's longest held prefix of the worker's keys.
import type { WorkerTruthTable } from '../tables/index.js';
import type { HashAlgo } from '../wire/kv-event.js';
import { workerKeyId, type DecisionKeys } from './observation-digester.js';

export interface WorkerTokenOracleInput {
  readonly servers: readonly string[];
  readonly chosen: string;
  /** tokens the chosen server reported as cached */
  readonly cachedTokens: number;
  readonly keys: DecisionKeys;
  readonly truth: WorkerTruthTable;
  readonly blockSizeOf: (server: string) => number | null;
  readonly hashAlgoOf: (server: string) => HashAlgo;
}

export interface WorkerTokenOracle {
  readonly servers: readonly string[];
  /** tokens each server could have served from cache */
  readonly oracle: readonly number[];
  readonly chosenIndex: number;
  readonly best: number;
  /** the chosen server held (within one block) as much as the best one */
  readonly chosenIsBest: boolean;
  /** servers holding the longest prefix (within one block of it) */
  readonly bestServers: readonly string[];
}

export function workerTokenOracle(input: WorkerTokenOracleInput): WorkerTokenOracle {
  const servers = input.servers.includes(input.chosen) ? [...input.servers] : [...input.servers, input.chosen];
  const chosenIndex = servers.indexOf(input.chosen);
  const oracle = servers.map((server, i) => {
    if (i === chosenIndex) return Math.min(input.cachedTokens, input.keys.hashedTokens + 1);
    const size = input.blockSizeOf(server);
    const keys = size === null ? undefined : input.keys.worker.get(workerKeyId(input.hashAlgoOf(server), size));
    if (size === null || keys === undefined || keys.length === 0) return 0;
    return Math.min(input.truth.bestPrefix(server, keys).bestRankBlocks * size, input.keys.hashedTokens);
  });
  const best = Math.max(0, ...oracle);
  // the chosen share is a reported token count, the others whole blocks: one block of slack either way
  const slack = Math.max(1, input.blockSizeOf(input.chosen) ?? 1);
  const near = (v: number): boolean => best > 0 && v + slack > best;
  return {
    servers,
    oracle,
    chosenIndex,
    best,
    chosenIsBest: near(oracle[chosenIndex]!),
    bestServers: servers.filter((_, i) => near(oracle[i]!)),
  };
}
