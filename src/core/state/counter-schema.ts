// Every counter the state keeps, named once with the labels it is kept by. A key is built from a name of this
// schema and label values of the declared shape, so a misspelt counter or a missing label does not compile.
// Reducers count into the keys (StateCounters); projections read them.
import type { RequestUnreadableReason } from '../relay/request-unreadable.js';
import type { PreferenceSample } from '../diagnosis/holder-preference.js';

interface LabelTypes {
  readonly server: string;
  readonly rank: number;
  readonly reason: RequestUnreadableReason;
  /** whose holding the router is tested against: the oracle-best server (truth) or the previous turn's (turn) */
  readonly holder: 'truth' | 'turn';
  readonly set: PreferenceSample['set'];
}

type Label = keyof LabelTypes;

export const COUNTER_LABELS = {
  // worker events (worker-events-reducer.ts)
  drains: ['server'],
  emptyDrains: ['server'],
  events: ['server'],
  streamEvents: ['server'],
  streamBatchesFilled: ['server'],
  storedEvents: ['server'],
  gaps: ['server'],
  missedEvents: ['server'],
  resets: ['server'],
  rankEvents: ['server', 'rank'],
  rankGaps: ['server', 'rank'],
  rankMissedEvents: ['server', 'rank'],
  rankResets: ['server', 'rank'],
  hashMatch: ['server'],
  hashMismatch: ['server'],
  hashUnverifiable: ['server'],
  // router deliveries (router-deliveries-reducer.ts)
  routerPolls: ['server'],
  eventsDeliveredToRouter: ['server'],
  eventsDroppedForConsumers: ['server'],
  pollFailures: ['server'],
  eventMatchDiagCalls: ['server'],
  eventMatchDiagTotalMatched: ['server'],
  eventMatchDiagEventMatched: ['server'],
  // decisions (decisions-reducer.ts, decision-join.ts)
  requests: ['server'],
  unreadableRequests: ['server', 'reason'],
  textOrChat: [],
  inflightSum: ['server'],
  inflightReports: ['server'],
  maxInflightSum: [],
  maxInflightReports: [],
  loadSpreadOverCacheDelta: [],
  peakInflight: [],
  followups: [],
  sticky: [],
  withKeys: [],
  predictedAnyMatch: [],
  oracleAnyMatch: [],
  firstBlockHeld: [],
  noPrefix: [],
  oracleBest: [],
  notOracleBest: [],
  oracleBestByChance: [],
  oracleBestHeldBy: ['server'],
  agreesWithReplica: [],
  sentAwayByLoad: [],
  chosenCacheTerm: [],
  bestCacheTerm: [],
  loadTermReports: [],
  loadTermSpread: [],
  predictedCachedTokens: [],
  predictedRouterCachedTokens: ['server'],
  preferenceDecisions: ['holder', 'set'],
  preferenceHolderChosen: ['holder', 'set'],
  preferenceBlindExpected: ['holder', 'set'],
  routerScores: [],
  routerScoresAnyMatch: [],
  routerScoresSentAwayByLoad: [],
  replicaPredictedMatch: [],
  replicaMatchRouterNone: [],
  // outcomes (outcomes-reducer.ts)
  outcomes: ['server'],
  failures: ['server'],
  promptTokens: ['server'],
  cachedTokens: ['server'],
  oracleCachedTokens: ['server'],
  withOutcome: [],
  withWorkerTokens: [],
  followupsWithOutcome: [],
  scattered: [],
  avoidableScattered: [],
  stickyIdealCachedTokens: [],
  stickyIdealPromptTokens: [],
  joinedPromptTokens: [],
  joinedCachedTokens: [],
  joinedOracleCachedTokens: [],
  joinedOutcomes: ['server'],
  realisedAboveOracle: ['server'],
} as const satisfies Record<string, readonly Label[]>;

export type CounterName = keyof typeof COUNTER_LABELS;

type LabelValues<Labels extends readonly Label[]> = { readonly [I in keyof Labels]: LabelTypes[Labels[I]] };

/** A key of one counter: made by counterKey only. */
export type CounterKey = string & { readonly __counterKey: never };

export function counterKey<N extends CounterName>(name: N, ...labels: LabelValues<(typeof COUNTER_LABELS)[N]>): CounterKey {
  if (labels.length === 0) return name as CounterKey;
  if (labels.length === 1) return `${name}|${labels[0]}` as CounterKey;
  return `${name}|${labels.join('|')}` as CounterKey;
}
