// What the rules read (DiagnosisInput), projected from the state's counters over the rules' window, its tables and
// its facts. Pure: reading changes nothing.
import type { PreferenceTally } from '../diagnosis/holder-preference.js';
import type {
  DecisionDiagnosis,
  DiagnosisInput,
  RankDiagnosis,
  RouterDiagnosis,
  ServerDiagnosis,
} from '../diagnosis/rule.js';
import { REQUEST_UNREADABLE_REASONS, type RequestUnreadableReason } from '../relay/request-unreadable.js';
import { counterKey, type CounterKey } from './counter-schema.js';
import { hashCheckCounts } from './hash-check-counts.js';
import { NEWEST_LOAD_WEIGHT } from '../diagnosis/router-defaults.js';
import type { RenderParity } from './render-parity.js';
import type { SidecarLagSummary } from './sidecar-load-ledger.js';
import type { SourceHealthBoard } from './source-health-board.js';
import { pullPathServed, routerEventRead } from './router-event-read.js';
import type { DecisionsView } from './decisions-reducer.js';
import type { RouterDeliveriesView } from './router-deliveries-reducer.js';
import type { WorkerEventsView } from './worker-events-reducer.js';
import type { StateModel } from './state-model.js';

export interface DiagnosisSources {
  readonly model: StateModel;
  readonly workerEvents: WorkerEventsView;
  readonly decisions: DecisionsView;
  readonly router: RouterDeliveriesView;
  readonly sources: SourceHealthBoard;
  readonly render: RenderParity;
}

/** a vLLM stream's stated hashing, when kvsentinel recomputes its blocks (sha256_cbor) */
function vllmHashingOf(m: StateModel, server: string): ServerDiagnosis['vllmHashing'] {
  const hashing = m.paths.streamOrigin(server)?.vllmHashing;
  return hashing !== undefined && hashing.algo === 'sha256_cbor'
    ? { algo: hashing.algo, seedKnown: hashing.seedKnown }
    : null;
}

function serverDiagnosis(
  { model: m, workerEvents, router }: DiagnosisSources,
  server: string,
  now: number,
  lag: SidecarLagSummary,
): ServerDiagnosis {
  const sum = (key: CounterKey): number => m.counters.windowed(key, now);
  const facts = router.factsOf(server);
  const pull = m.pullEvents.of(server);
  const deployment = m.deployment;
  const ranks: RankDiagnosis[] = m.sequence.ranks(server).map((r) => ({
    rank: r.attentionDpRank,
    stated: r.rankStated,
    events: sum(counterKey('rankEvents', server, r.attentionDpRank)),
    gaps: sum(counterKey('rankGaps', server, r.attentionDpRank)),
    missedEvents: sum(counterKey('rankMissedEvents', server, r.attentionDpRank)),
    resets: sum(counterKey('rankResets', server, r.attentionDpRank)),
    lastEventId: r.lastEventId,
  }));
  const inflightReports = sum(counterKey('inflightReports', server));
  return {
    server,
    requests: sum(counterKey('requests', server)),
    outcomes: sum(counterKey('outcomes', server)),
    failures: sum(counterKey('failures', server)),
    promptTokens: sum(counterKey('promptTokens', server)),
    cachedTokens: sum(counterKey('cachedTokens', server)),
    drains: sum(counterKey('drains', server)),
    emptyDrains: sum(counterKey('emptyDrains', server)),
    events: sum(counterKey('events', server)),
    eventsTotal: m.counters.total(counterKey('events', server), now),
    streamed: m.paths.streamed(server),
    streamEngine: m.paths.streamOrigin(server)?.engine ?? null,
    streamEvents: sum(counterKey('streamEvents', server)),
    streamBatchesFilled: sum(counterKey('streamBatchesFilled', server)),
    storedEvents: sum(counterKey('storedEvents', server)),
    gaps: sum(counterKey('gaps', server)),
    missedEvents: sum(counterKey('missedEvents', server)),
    sidecarGaps: lag.byServer.get(server)?.gaps ?? 0,
    sidecarMissed: lag.byServer.get(server)?.missed ?? 0,
    lastPullEventTs: pull.lastPullEventTs,
    newBlockOutcomesSincePullEvent: pull.newBlockOutcomesSincePullEvent,
    resets: sum(counterKey('resets', server)),
    ranks,
    routerPolls: sum(counterKey('routerPolls', server)),
    routerPollsTotal: m.counters.total(counterKey('routerPolls', server), now),
    eventsDeliveredToRouter: sum(counterKey('eventsDeliveredToRouter', server)),
    pollFailures: sum(counterKey('pollFailures', server)),
    hashChecks: hashCheckCounts(server, sum),
    alternativeHashAlgo: workerEvents.alternativeAlgoOf(server),
    vllmHashing: vllmHashingOf(m, server),
    advertisedHashAlgo: deployment.advertisedHashAlgo(server),
    hashAlgo: deployment.hashAlgoOf(server),
    advertisedBlockSize: deployment.advertisedBlockSize(server),
    inferredBlockSize: deployment.inferredBlockSize(server),
    truthBlocks: m.truth.blockCount(server),
    streamStoredBlocks: sum(counterKey('streamStoredBlocks', server)),
    streamScopedBlocks: sum(counterKey('streamScopedBlocks', server)),
    replicaBlocks: m.replica.blockCount(server),
    kvCapacity: m.capacity.of(server),
    historyIncomplete: m.history.of(server),
    routerState: facts.routerState,
    realisedAboveOracle: sum(counterKey('realisedAboveOracle', server)),
    joinedOutcomes: sum(counterKey('joinedOutcomes', server)),
    meanInflight: inflightReports > 0 ? sum(counterKey('inflightSum', server)) / inflightReports : null,
    pollingSkipped: facts.pollingSkipped,
    eventMatchDiag: {
      calls: sum(counterKey('eventMatchDiagCalls', server)),
      totalMatched: sum(counterKey('eventMatchDiagTotalMatched', server)),
      eventMatched: sum(counterKey('eventMatchDiagEventMatched', server)),
      eventBlocks: facts.eventBlocks,
      totalBlocks: facts.totalBlocks,
    },
    unreadableRequests: Object.fromEntries(
      REQUEST_UNREADABLE_REASONS.map((r) => [r, sum(counterKey('unreadableRequests', server, r))]),
    ) as Record<RequestUnreadableReason, number>,
  };
}

function decisionDiagnosis(
  m: StateModel,
  serverCount: number,
  serverIds: readonly string[],
  servers: readonly ServerDiagnosis[],
  now: number,
): DecisionDiagnosis {
  const sum = (key: CounterKey): number => m.counters.windowed(key, now);
  const maxInflightReports = sum(counterKey('maxInflightReports'));
  // every decision is counted by its server: the decisions are the servers' requests
  const decisions = servers.reduce((n, s) => n + s.requests, 0);
  const requestsOf = new Map(servers.map((s) => [s.server, s.requests]));
  // the null model of "routing ignores the cache": a server is picked with its observed share of requests
  const share = (server: string): number => (decisions > 0 ? (requestsOf.get(server) ?? 0) / decisions : 0);
  const tally = (holder: 'truth' | 'turn', set: 'away' | 'tie'): PreferenceTally => ({
    decisions: sum(counterKey('preferenceDecisions', holder, set)),
    holderChosen: sum(counterKey('preferenceHolderChosen', holder, set)),
    blindExpected: sum(counterKey('preferenceBlindExpected', holder, set)),
  });
  let topServer: string | null = null;
  for (const sv of serverIds) if (share(sv) > 0 && (topServer === null || share(sv) > share(topServer))) topServer = sv;
  return {
    serverCount,
    decisions,
    withKeys: sum(counterKey('withKeys')),
    withWorkerTokens: sum(counterKey('withWorkerTokens')),
    textOrChat: sum(counterKey('textOrChat')),
    withOutcome: sum(counterKey('withOutcome')),
    predictedAnyMatch: sum(counterKey('predictedAnyMatch')),
    oracleAnyMatch: sum(counterKey('oracleAnyMatch')),
    firstBlockHeld: sum(counterKey('firstBlockHeld')),
    oracleBest: sum(counterKey('oracleBest')),
    notOracleBest: sum(counterKey('notOracleBest')),
    noPrefix: sum(counterKey('noPrefix')),
    oracleBestByChance: sum(counterKey('oracleBestByChance')),
    oracleBestByLoadShare: serverIds.reduce((n, sv) => n + share(sv) * sum(counterKey('oracleBestHeldBy', sv)), 0),
    stickinessByLoadShare: serverIds.reduce((n, sv) => n + share(sv) ** 2, 0),
    agreesWithReplica: sum(counterKey('agreesWithReplica')),
    sentAwayByLoad: sum(counterKey('sentAwayByLoad')),
    followups: sum(counterKey('followups')),
    sticky: sum(counterKey('sticky')),
    followupsWithOutcome: sum(counterKey('followupsWithOutcome')),
    scattered: sum(counterKey('scattered')),
    avoidableScattered: sum(counterKey('avoidableScattered')),
    avoidableScatterLostTokens: sum(counterKey('avoidableScatterLostTokens')),
    followupPromptTokens: sum(counterKey('followupPromptTokens')),
    stickyIdealMovedTurns: sum(counterKey('stickyIdealMovedTurns')),
    stickyIdealEvictedTurns: sum(counterKey('stickyIdealEvictedTurns')),
    stickyIdealUnboundedTurns: sum(counterKey('stickyIdealUnboundedTurns')),
    promptTokens: servers.reduce((n, s) => n + s.promptTokens, 0),
    cachedTokens: servers.reduce((n, s) => n + s.cachedTokens, 0),
    joinedPromptTokens: sum(counterKey('joinedPromptTokens')),
    joinedCachedTokens: sum(counterKey('joinedCachedTokens')),
    joinedOracleCachedTokens: sum(counterKey('joinedOracleCachedTokens')),
    stickyIdealCachedTokens: sum(counterKey('stickyIdealCachedTokens')),
    stickyIdealPromptTokens: sum(counterKey('stickyIdealPromptTokens')),
    predictedCachedTokens: sum(counterKey('predictedCachedTokens')),
    meanMaxInflight: maxInflightReports > 0 ? sum(counterKey('maxInflightSum')) / maxInflightReports : null,
    inflightReports: maxInflightReports,
    loadSpreadOverCacheDelta: sum(counterKey('loadSpreadOverCacheDelta')),
    peakInflight: m.counters.windowedMax(counterKey('peakInflight'), now),
    realisedAboveOracle: servers.reduce((n, s) => n + s.realisedAboveOracle, 0),
    joinedOutcomes: servers.reduce((n, s) => n + s.joinedOutcomes, 0),
    preference: {
      truth: { away: tally('truth', 'away'), tie: tally('truth', 'tie') },
      turn: { away: tally('turn', 'away'), tie: tally('turn', 'tie') },
    },
    topServerShare: topServer === null ? 0 : share(topServer),
    topServer,
  };
}

function routerDiagnosis(
  m: StateModel,
  servers: readonly ServerDiagnosis[],
  tpbCandidates: readonly number[],
): RouterDiagnosis {
  const router = m.deployment.router;
  const read = routerEventRead(m, servers);
  return {
    ...read,
    type: router.routerType,
    source: router.source,
    ...m.routerTokensPerBlock(tpbCandidates),
    maxBatchSize: router.maxBatchSize,
    backfillBlockHashesOnFinish: router.backfillBlockHashesOnFinish,
    consumesEvents: read.readsEvents !== 'none',
    profile: router.profile,
    profileFrom: router.profileFrom,
    trackRoutedBlocks:
      router.trackRoutedBlocks ?? (router.profile === 'newest' ? true : router.profile === '2026-06' ? false : null),
    loadWeight: router.loadWeight ?? (router.profile === 'newest' ? NEWEST_LOAD_WEIGHT : null),
    loadCap: router.loadCap,
    fillsOwnTable: m.fillsOwnTable(),
  };
}

export function projectDiagnosisInput(parts: DiagnosisSources, now: number): DiagnosisInput {
  const { model: m, decisions, router: deliveries, sources, render } = parts;
  const sum = (key: CounterKey): number => m.counters.windowed(key, now);
  const serverIds = m.deployment.serverIds();
  const window = m.counters.span(now);
  const lag = m.sidecarLoad.summary(window?.from ?? null, now);
  const servers = serverIds.map((server) => serverDiagnosis(parts, server, now, lag));
  const router = routerDiagnosis(m, servers, decisions.tokensPerBlockCandidates);
  return {
    now,
    sidecar: {
      lagIntervals: lag.intervals,
      laggingMs: lag.laggingMs,
      worstEventLoopDelayMs: lag.worstEventLoopDelayMs,
      worstUtilization: lag.worstUtilization,
      laggingNow: lag.laggingNow,
      lastLagEnd: lag.lastLagEnd,
      worstBacklogMs: lag.worstBacklogMs,
    },
    window,
    thresholds: m.thresholds,
    router,
    seesWorkerEvents: m.seesWorkerEvents,
    seesRouterPolls: m.paths.seesRouterPolls,
    // the router's kind says whether polls are due; unknown: a pull endpoint some server serves
    routerPollsExpected: router.readsEvents === 'pull' || (router.readsEvents === null && servers.some(pullPathServed)),
    seesRouterDebug: deliveries.seesRouterDebug,
    servers,
    decisions: decisionDiagnosis(m, decisions.serverCount(), serverIds, servers, now),
    routerScores: {
      decisions: sum(counterKey('routerScores')),
      anyMatch: sum(counterKey('routerScoresAnyMatch')),
      sentAwayByLoad: sum(counterKey('routerScoresSentAwayByLoad')),
      replicaPredictedMatch: sum(counterKey('replicaPredictedMatch')),
      replicaMatchRouterNone: sum(counterKey('replicaMatchRouterNone')),
    },
    render: render.diagnosis(now),
    sources: sources.diagnosis(),
  };
}
