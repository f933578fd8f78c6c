// A quiet DiagnosisInput (three healthy relay-mode servers, enough samples, nothing wrong) that rule tests bend one
// field at a time.
import type { DecisionDiagnosis, DiagnosisInput, ServerDiagnosis } from '../../src/core/diagnosis/rule.js';
import { DEFAULT_THRESHOLDS } from '../../src/core/diagnosis/thresholds.js';
import { runRules } from '../../src/core/diagnosis/run-rules.js';
import { RULES } from '../../src/core/diagnosis/rules/index.js';

export function quietServer(server: string, over: Partial<ServerDiagnosis> = {}): ServerDiagnosis {
  return {
    server,
    requests: 200,
    outcomes: 200,
    failures: 0,
    promptTokens: 2_000_000,
    cachedTokens: 1_900_000,
    drains: 100,
    emptyDrains: 10,
    events: 900,
    eventsTotal: 900,
    streamed: false,
    streamEngine: null,
    streamEvents: 0,
    streamBatchesFilled: 0,
    storedEvents: 300,
    gaps: 0,
    missedEvents: 0,
    sidecarGaps: 0,
    sidecarMissed: 0,
    lastPullEventTs: 599_000,
    newBlockOutcomesSincePullEvent: 1,
    resets: 0,
    ranks: [{ rank: 0, stated: false, events: 900, gaps: 0, missedEvents: 0, resets: 0, lastEventId: 899 }],
    routerPolls: 200,
    routerPollsTotal: 200,
    eventsDeliveredToRouter: 900,
    pollFailures: 0,
    hashChecks: { match: 5000, mismatch: 0, unverifiable: 0 },
    alternativeHashAlgo: null,
    vllmHashing: null,
    advertisedHashAlgo: 'v1_block_key',
    hashAlgo: 'v1_block_key',
    advertisedBlockSize: 128,
    inferredBlockSize: 128,
    truthBlocks: 4000,
    replicaBlocks: 4000,
    kvCapacity: { blocks: 32_768, from: 'created event' },
    routerState: null,
    realisedAboveOracle: 2,
    joinedOutcomes: 200,
    meanInflight: 20,
    pollingSkipped: null,
    eventMatchDiag: { calls: 0, totalMatched: 0, eventMatched: 0, eventBlocks: null, totalBlocks: null },
    unreadableRequests: { unknown_encoding: 0, malformed: 0, too_large: 0, no_prompt: 0 },
    historyIncomplete: [],
    ...over,
  };
}

/** a router blind to the cache (load-only): it picks the holder no more often than its least-loaded choice allows */
export const BLIND_PREFERENCE: DecisionDiagnosis['preference'] = {
  truth: {
    away: { decisions: 200, holderChosen: 2, blindExpected: 67 },
    tie: { decisions: 150, holderChosen: 72, blindExpected: 70 },
  },
  turn: {
    away: { decisions: 180, holderChosen: 1, blindExpected: 60 },
    tie: { decisions: 140, holderChosen: 66, blindExpected: 65 },
  },
};

/** no load reports (logs only): no informative decision */
export const NO_PREFERENCE: DecisionDiagnosis['preference'] = {
  truth: {
    away: { decisions: 0, holderChosen: 0, blindExpected: 0 },
    tie: { decisions: 0, holderChosen: 0, blindExpected: 0 },
  },
  turn: {
    away: { decisions: 0, holderChosen: 0, blindExpected: 0 },
    tie: { decisions: 0, holderChosen: 0, blindExpected: 0 },
  },
};

export function quietDecisions(over: Partial<DecisionDiagnosis> = {}): DecisionDiagnosis {
  return {
    serverCount: 3,
    decisions: 600,
    withKeys: 600,
    withWorkerTokens: 0,
    textOrChat: 0,
    withOutcome: 600,
    predictedAnyMatch: 590,
    oracleAnyMatch: 595,
    firstBlockHeld: 598,
    oracleBest: 560,
    notOracleBest: 30,
    noPrefix: 10,
    oracleBestByChance: 250,
    oracleBestByLoadShare: 250,
    stickinessByLoadShare: 1 / 3,
    agreesWithReplica: 600,
    sentAwayByLoad: 3,
    followups: 500,
    sticky: 470,
    followupsWithOutcome: 500,
    scattered: 10,
    avoidableScattered: 10,
    avoidableScatterLostTokens: 80_000,
    followupPromptTokens: 5_000_000,
    stickyIdealMovedTurns: 30,
    stickyIdealEvictedTurns: 0,
    stickyIdealUnboundedTurns: 0,
    promptTokens: 6_000_000,
    cachedTokens: 5_700_000,
    joinedPromptTokens: 6_000_000,
    joinedCachedTokens: 5_700_000,
    joinedOracleCachedTokens: 5_760_000,
    stickyIdealCachedTokens: 5_760_000,
    stickyIdealPromptTokens: 6_000_000,
    predictedCachedTokens: 5_600_000,
    meanMaxInflight: 24,
    inflightReports: 600,
    loadSpreadOverCacheDelta: 0,
    peakInflight: 40,
    realisedAboveOracle: 6,
    joinedOutcomes: 600,
    // a cache-aware router: it picks the holder far more often than a blind router would
    preference: {
      truth: {
        away: { decisions: 200, holderChosen: 190, blindExpected: 67 },
        tie: { decisions: 150, holderChosen: 148, blindExpected: 70 },
      },
      turn: {
        away: { decisions: 180, holderChosen: 170, blindExpected: 60 },
        tie: { decisions: 140, holderChosen: 138, blindExpected: 65 },
      },
    },
    topServerShare: 0.34,
    topServer: 'ctx0',
    ...over,
  };
}

/** the 2026-06 router, as the simulator states it */
export const KNOWN_2026_06 = {
  profile: '2026-06',
  profileFrom: 'simulator',
  trackRoutedBlocks: false,
  loadWeight: null,
  loadCap: null,
  fillsOwnTable: false,
} as const;

/** a sidecar that never lagged */
export const QUIET_SIDECAR = {
  lagIntervals: 0,
  laggingMs: 0,
  worstEventLoopDelayMs: 0,
  worstUtilization: 0,
  laggingNow: false,
  lastLagEnd: null,
  worstBacklogMs: 0,
} as const;

export function quietInput(over: Partial<DiagnosisInput> = {}): DiagnosisInput {
  return {
    now: 600_000,
    sidecar: QUIET_SIDECAR,
    window: { from: 0, to: 600_000 },
    thresholds: DEFAULT_THRESHOLDS,
    router: {
      type: 'kv_cache_aware',
      source: 'simulator',
      blockSize: { tokens: 128, basis: 'logged', from: 'simulator' },
      tokensPerBlockCandidates: [],
      maxBatchSize: 512,
      backfillBlockHashesOnFinish: false,
      consumesEvents: true,
      readsEvents: 'pull',
      readsEventsFrom: 'its polls',
      ...KNOWN_2026_06,
    },
    seesWorkerEvents: true,
    seesRouterPolls: true,
    routerPollsExpected: true,
    seesRouterDebug: false,
    servers: ['ctx0', 'ctx1', 'ctx2'].map((s) => quietServer(s)),
    decisions: quietDecisions(),
    routerScores: { decisions: 0, anyMatch: 0, sentAwayByLoad: 0, replicaPredictedMatch: 0, replicaMatchRouterNone: 0 },
    render: {
      compared: 0,
      rendered: 0,
      differing: 0,
      breaking: 0,
      firstBlock: 0,
      causes: [],
      differingServers: [],
      minPosition: null,
      sample: null,
    },
    sources: [],
    ...over,
  };
}

/** a worker whose KV events never reach the sidecar: none drained or stored, so no worker truth */
export const EVENTS_OFF = {
  events: 0,
  eventsTotal: 0,
  storedEvents: 0,
  truthBlocks: 0,
} as const satisfies Partial<ServerDiagnosis>;

/** every server with the same overrides */
export function servers(over: Partial<ServerDiagnosis>): ServerDiagnosis[] {
  return ['ctx0', 'ctx1', 'ctx2'].map((s) => quietServer(s, over));
}

/** The ids of the findings the rules raise on `input`. */
export function firing(input: DiagnosisInput): string[] {
  return [...runRules(RULES, input).hits.keys()];
}
