// Minimum samples and thresholds of the findings: nothing fires on thin evidence. Defaults are calibrated on the
// simulator's healthy and faulty presets (test/integration/fault-matrix.test.ts) and can be overridden.

export interface DiagnosisThresholds {
  /** requests a server must have served before server-level findings (events-absent, router-not-polling) hold */
  readonly minServerRequests: number;
  /** decisions before statistical findings (cache-signal-inert, load-term-dominates, hit-rate-below-oracle) */
  readonly minDecisions: number;
  /** follow-up turns before turn-based findings (stickiness, scatter) */
  readonly minFollowups: number;
  /** event_id gaps on a server before event-queue-shared */
  readonly minGaps: number;
  /** routing counts as inert when it beats chance by no more than this (oracle-best rate, stickiness) */
  readonly inertMargin: number;
  /** informative decisions (holder-preference.ts) one away / tie set needs before it counts as evidence */
  readonly minPreferenceDecisions: number;
  /** load-concentrated when one server takes this much more than an even share (1/N) of the decisions */
  readonly concentrationExcess: number;
  /** predicted router matches count as "≡ 0" below this share of decisions */
  readonly predictedMatchMaxShare: number;
  /** … provided worker truth shows reusable prefixes in at least this share of decisions */
  readonly oracleMatchMinShare: number;
  /** turn-scatter-high above this ratio, of all scatter and of the scatter routing could have avoided */
  readonly maxTurnScatter: number;
  /** … and only when the avoidable scatter cost more than this share of the follow-up turns' prompt tokens */
  readonly minScatterCostShare: number;
  /** hit-rate-below-oracle when realised hit trails the oracle by more than this (absolute ratio) */
  readonly maxHitRateGap: number;
  /** load-term-dominates when this share of decisions were sent away from a prefix by the load term */
  readonly maxSentAwayShare: number;
  /** load-term-dominates when the mean active requests per server reach this multiple of max_batch_size */
  readonly activeOverBatchFactor: number;
  /** router-hash-divergence when the router agrees with the replicated score on less than this share */
  readonly minReplicaAgreement: number;
  /** a cache term this much larger (fraction of the prompt) counts as "its prefix" */
  readonly sentAwayCacheDelta: number;
  /** hash-mismatch after this many mismatching blocks */
  readonly minHashMismatches: number;
  /** router-hash-divergence when router-style keys are found in worker truth for less than this share */
  readonly maxDivergentMatchShare: number;
  /** events-partial-ranks when at least this share of joined outcomes had more cached than worker truth held */
  readonly minUnderReportedShare: number;
  /** events-partial-ranks when an attention-DP server's events come from rank 0 alone after this many events */
  readonly minRankZeroEvents: number;
  /** source-unreachable after a source has been down this long, ms */
  readonly sourceDownMs: number;
  /** render-drift needs this many requests whose router-side ids were compared with the worker's */
  readonly minRenderChecks: number;
  /** render-drift when more than this share of compared requests differ */
  readonly maxRenderDriftShare: number;
  /** render-drift is critical when at least this share of compared requests lose most router matches */
  readonly renderBreakingCriticalShare: number;
}

export const DEFAULT_THRESHOLDS: DiagnosisThresholds = {
  minServerRequests: 20,
  minDecisions: 60,
  minFollowups: 40,
  minGaps: 3,
  inertMargin: 0.15,
  minPreferenceDecisions: 30,
  concentrationExcess: 0.3,
  predictedMatchMaxShare: 0.01,
  oracleMatchMinShare: 0.2,
  maxTurnScatter: 0.05,
  minScatterCostShare: 0.02,
  maxHitRateGap: 0.03,
  maxSentAwayShare: 0.02,
  activeOverBatchFactor: 1.5,
  minReplicaAgreement: 0.6,
  sentAwayCacheDelta: 0.25,
  minHashMismatches: 5,
  maxDivergentMatchShare: 0.02,
  minUnderReportedShare: 0.25,
  minRankZeroEvents: 100,
  sourceDownMs: 10_000,
  minRenderChecks: 10,
  maxRenderDriftShare: 0.02,
  renderBreakingCriticalShare: 0.25,
};
