// The per-decision join of docs/design.md §4: for one hashed prompt, what each server's router table (our replica)
// matches, what each worker really holds (worker truth), and the router's score of each, counted for the rules.
import { DEFAULT_ROUTER_MAX_BATCH_SIZE, NEWEST_LOAD_WEIGHT } from '../diagnosis/router-defaults.js';
import type { DecisionObservation } from '../observe/observation.js';
import { counterKeys, type KeptBy } from './counter-key.js';
import type { JoinCandidate } from './joined-events.js';
import { keysAtBlockSize, workerKeyId, workerKeySizes, type DecisionKeys } from './observation-digester.js';
import type { StateModel } from './state-model.js';

/** The counters of the join, grouped by the labels they are kept by (counter-key.ts). */
export type DecisionJoinCounters = KeptBy<
  [],
  | 'withKeys'
  | 'predictedAnyMatch'
  | 'oracleAnyMatch'
  | 'firstBlockHeld'
  | 'noPrefix'
  | 'oracleBest'
  | 'notOracleBest'
  | 'oracleBestByChance'
  | 'agreesWithReplica'
  | 'sentAwayByLoad'
  | 'chosenCacheTerm'
  | 'bestCacheTerm'
  | 'loadTermReports'
  | 'loadTermSpread'
  | 'predictedCachedTokens'
> &
  KeptBy<['server'], 'oracleBestHeldBy'>;

const counterKey = counterKeys<DecisionJoinCounters>();

export interface DecisionJoinResult {
  /** tokens the oracle-best server held, and the chosen one */
  readonly oracleBest: number;
  readonly oracleChosen: number;
  readonly predictedChosen: number;
  readonly predictedAny: boolean;
  readonly blockSize: number;
  /** per server (only when wanted: the joined-event stream has listeners) */
  readonly candidates: readonly JoinCandidate[];
  readonly oracleBestServers: string[];
  /** the router chunk sizes predicted with: the known one, or the candidates while it is unknown */
  readonly routerTokensPerBlock: readonly number[];
  readonly routerTokensPerBlockKnown: boolean;
}

/**
 * The router chunk sizes to predict with: the stated one; else the inferred one; else the candidates (32 and every
 * worker block size) while the router's behaviour decides between them.
 */
function routerBlockSizes(
  m: StateModel,
  keys: DecisionKeys,
): { readonly known: boolean; readonly candidates: readonly number[] } {
  if (m.deployment.router.blockSize !== null) return { known: true, candidates: [keys.routerTokensPerBlock] };
  const inferred = m.tpbInference.inferred;
  if (inferred !== null) return { known: true, candidates: [inferred] };
  const candidates = [
    keys.routerTokensPerBlock,
    ...workerKeySizes(keys).filter((size) => size !== keys.routerTokensPerBlock),
  ];
  return { known: false, candidates };
}

/** The router's score of one server, with the profile's formula (2026-06 when unknown). */
function routerScore(m: StateModel, matchedTokens: number, promptBlocks: number, tpb: number, active: number): number {
  const r = m.deployment.router;
  if (r.profile === 'newest') return matchedTokens / tpb - (r.loadWeight ?? NEWEST_LOAD_WEIGHT) * active;
  return matchedTokens / Math.max(promptBlocks * tpb, 1) - active / (r.maxBatchSize ?? DEFAULT_ROUTER_MAX_BATCH_SIZE);
}

/** Joins one decision with both tables and counts what the rules read of it. */
export function joinDecision(
  m: StateModel,
  obs: DecisionObservation,
  keys: DecisionKeys,
  withOracle: boolean,
  withCandidates: boolean,
): DecisionJoinResult {
  const ts = obs.ts;
  const c = m.counters;
  const servers = m.deployment.serverIds();
  if (!servers.includes(obs.server)) servers.push(obs.server);
  const n = servers.length;
  const algos = servers.map((s) => m.deployment.hashAlgoOf(s));
  const chosenIndex = servers.indexOf(obs.server);
  // predicted router matches under each chunk size the router may use
  const sizes = routerBlockSizes(m, keys);
  let predictedAny = false;
  const predictedBy = new Map<number, { predicted: number[]; blocks: number[] }>();
  for (const tpb of sizes.candidates) {
    const predicted = new Array<number>(n).fill(0);
    const blocks = new Array<number>(n).fill(0);
    for (let i = 0; i < n; i++) {
      const routerKeys = keysAtBlockSize(keys, tpb, algos[i]!);
      if (routerKeys === undefined) continue;
      predicted[i] = m.replica.matchedBlocks(servers[i]!, routerKeys, algos[i]) * tpb;
      blocks[i] = routerKeys.length;
      if (predicted[i]! > 0) predictedAny = true;
    }
    predictedBy.set(tpb, { predicted, blocks });
    if (!sizes.known) m.tpbInference.observe(tpb, predicted, chosenIndex);
  }
  if (!sizes.known) m.tpbInference.settle();
  // scores and predicted tokens with the known size, or the candidate the router follows best so far
  const tpb = sizes.known ? sizes.candidates[0]! : m.tpbInference.leader(sizes.candidates, keys.routerTokensPerBlock);
  const { predicted, blocks } = predictedBy.get(tpb)!;
  const oracle = new Array<number>(n).fill(0);
  const scores = new Array<number>(n).fill(0);
  const cacheTerms = new Array<number>(n).fill(0);
  let firstHeld = false;
  let chosenBlockSize = 0;
  for (let i = 0; i < n; i++) {
    const s = servers[i]!;
    const algo = algos[i]!;
    cacheTerms[i] = predicted[i]! / Math.max(blocks[i]! * tpb, 1);
    const size = m.deployment.blockSizeOf(s);
    const workerKeys = size === null ? undefined : keys.worker.get(workerKeyId(algo, size));
    if (size !== null && workerKeys !== undefined && workerKeys.length > 0) {
      const match = m.truth.bestPrefix(s, workerKeys);
      oracle[i] = Math.min(match.bestRankBlocks * size, keys.hashedTokens);
      if (!firstHeld && match.unionBlocks > 0) firstHeld = true;
    }
    if (i === chosenIndex) chosenBlockSize = size ?? 0;
    scores[i] = routerScore(m, predicted[i]!, blocks[i]!, tpb, obs.inflight?.[s] ?? 0);
  }
  c.add(ts, counterKey('withKeys'));
  // while the router's chunk size is unknown, a match predicted under any candidate counts (predicted ≡ 0 must
  // hold under every size the router may use)
  if (predictedAny) c.add(ts, counterKey('predictedAnyMatch'));
  const maxOracle = Math.max(...oracle);
  if (withOracle && maxOracle > 0) c.add(ts, counterKey('oracleAnyMatch'));
  if (withOracle && firstHeld) c.add(ts, counterKey('firstBlockHeld'));
  if (!withOracle) {
    // counted when the worker's ids arrive (OutcomesReducer)
  } else if (maxOracle <= 0) {
    c.add(ts, counterKey('noPrefix'));
  } else {
    const best = oracle.filter((o) => o === maxOracle).length;
    c.add(ts, counterKey(oracle[chosenIndex] === maxOracle ? 'oracleBest' : 'notOracleBest'));
    c.add(ts, counterKey('oracleBestByChance'), best / n);
    for (let i = 0; i < n; i++) if (oracle[i] === maxOracle) c.add(ts, counterKey('oracleBestHeldBy', servers[i]!));
  }
  const maxScore = Math.max(...scores);
  const agrees = scores[chosenIndex]! >= maxScore - 1e-9;
  if (agrees) c.add(ts, counterKey('agreesWithReplica'));
  // sent away by load: the router did what its (replicated) score says, and the score preferred a less loaded
  // server over one holding much more of the prompt
  const chosenTerm = cacheTerms[chosenIndex]!;
  c.add(ts, counterKey('chosenCacheTerm'), chosenTerm);
  c.add(ts, counterKey('bestCacheTerm'), Math.max(...cacheTerms));
  if (obs.inflight !== null) {
    // the load term is whatever the score takes away from the cache term (the router's formula decides)
    const loads = scores.map((score, i) => cacheTerms[i]! - score);
    c.add(ts, counterKey('loadTermReports'));
    c.add(ts, counterKey('loadTermSpread'), Math.max(...loads) - Math.min(...loads));
  }
  if (agrees && cacheTerms.some((t) => t - chosenTerm >= m.thresholds.sentAwayCacheDelta))
    c.add(ts, counterKey('sentAwayByLoad'));
  const predictedChosen = Math.min(predicted[chosenIndex]!, keys.hashedTokens);
  c.add(ts, counterKey('predictedCachedTokens'), predictedChosen);
  return {
    oracleBest: maxOracle,
    oracleChosen: oracle[chosenIndex]!,
    predictedChosen,
    predictedAny,
    blockSize: chosenBlockSize,
    candidates: withCandidates
      ? servers.map((server, i) => ({
          server,
          predictedTokens: predicted[i]!,
          oracleTokens: oracle[i]!,
          score: scores[i]!,
        }))
      : [],
    oracleBestServers: maxOracle > 0 ? servers.filter((_, i) => oracle[i] === maxOracle) : [],
    routerTokensPerBlock: sizes.candidates,
    routerTokensPerBlockKnown: sizes.known,
  };
}
