// What the outputs read (SentinelStateSnapshot), projected from the state's counters since start, its tables, the
// rules' input and the findings that hold. Pure: reading changes nothing.
import type { DiagnosisInput } from '../diagnosis/rule.js';
import { REQUEST_UNREADABLE_REASONS, type RequestUnreadableReason } from '../relay/request-unreadable.js';
import { counterKey, type CounterKey } from './counter-schema.js';
import { hashCheckCounts } from './hash-check-counts.js';
import type { DecisionsReducer, DecisionsView } from './decisions-reducer.js';
import type { OutcomesReducer } from './outcomes-reducer.js';
import type { ServerAdmission } from './server-admission.js';
import type { DecisionStats, RankStats, SentinelDropCounters, SentinelStateSnapshot, ServerStats } from './snapshot.js';
import type { SourceHealthBoard } from './source-health-board.js';
import type { StateModel } from './state-model.js';
import type { Evaluation } from '../diagnosis/rule-evaluator.js';
import type { SidecarStatsReducer } from './sidecar-stats-reducer.js';

export interface SnapshotSources {
  readonly model: StateModel;
  readonly decisions: DecisionsReducer;
  readonly outcomes: OutcomesReducer;
  readonly sources: SourceHealthBoard;
  readonly admission: ServerAdmission;
  readonly sidecar: SidecarStatsReducer;
}

function serverStats(m: StateModel, decisions: DecisionsView, server: string, now: number): ServerStats {
  const total = (key: CounterKey): number => m.counters.total(key, now);
  const streams = m.truth.streams(server);
  const unreadableByReason = Object.fromEntries(
    REQUEST_UNREADABLE_REASONS.map((r) => [r, total(counterKey('unreadableRequests', server, r))]),
  ) as Record<RequestUnreadableReason, number>;
  const ranks: RankStats[] = m.sequence.ranks(server).map((r) => {
    const blocksByLevel: Record<number, number> = {};
    for (const s of streams) {
      if (s.attentionDpRank !== r.attentionDpRank) continue;
      s.blocksPerLevel.forEach((n, level) => {
        blocksByLevel[level] = (blocksByLevel[level] ?? 0) + n;
      });
    }
    return {
      rank: r.attentionDpRank,
      eventsByType: r.eventsByType,
      gaps: r.gaps,
      missedEvents: r.missedEvents,
      resets: r.resets,
      lastEventId: r.lastEventId,
      blocksByLevel,
    };
  });
  return {
    server,
    ranks,
    routerTableBlocks: m.replica.blockCount(server),
    routerPolls: total(counterKey('routerPolls', server)),
    eventsDeliveredToRouter: total(counterKey('eventsDeliveredToRouter', server)),
    eventsDroppedForConsumers: total(counterKey('eventsDroppedForConsumers', server)),
    hashChecks: hashCheckCounts(server, total),
    workerTableBlocksEvicted: m.truth.evictedBlocks(server),
    historyIncomplete: m.history.of(server).map(({ rank, since, missingBatches }) => ({ rank, since, missingBatches })),
    routerTableBlocksEvicted: m.replica.evictedBlocks(server),
    requests: total(counterKey('requests', server)),
    requestFailures: total(counterKey('failures', server)),
    unreadableRequests: Object.values(unreadableByReason).reduce((n, c) => n + c, 0),
    unreadableByReason,
    promptTokens: total(counterKey('promptTokens', server)),
    cachedTokens: total(counterKey('cachedTokens', server)),
    oracleCachedTokens: total(counterKey('oracleCachedTokens', server)),
    predictedRouterCachedTokens: total(counterKey('predictedRouterCachedTokens', server)),
    inflight: decisions.inflightOf(server),
  };
}

function dropCounters({ model: m, decisions, outcomes, sources, admission }: SnapshotSources): SentinelDropCounters {
  const relay = [...m.relayBuffers()];
  return {
    trajectoriesEvicted: decisions.trajectories.dropped,
    trajectoriesExpired: decisions.trajectoriesExpired,
    pendingDecisionsEvicted: decisions.pending.dropped,
    pendingDecisionsExpired: decisions.pendingExpired,
    relayEventsDropped: relay.reduce((n, b) => n + b.dropped, 0),
    relayEventsMissed: relay.reduce((n, b) => n + b.missed, 0),
    sourcesIgnored: sources.ignored,
    outcomesWithoutDecision: outcomes.withoutDecision,
    scoreJoinsEvicted: decisions.scoreJoinsEvicted,
    incrementalKeysEvicted: m.digester.evicted.incrementalKeys,
    v2KeysEvicted: m.digester.evicted.v2Keys,
    serverObservationsIgnored: admission.ignored,
  };
}

export function projectSnapshot(
  parts: SnapshotSources,
  now: number,
  input: DiagnosisInput,
  held: Omit<Evaluation, 'at'>,
): SentinelStateSnapshot {
  const m = parts.model;
  const total = (key: CounterKey): number => m.counters.total(key, now);
  const servers = m.deployment.serverIds().map((server) => serverStats(m, parts.decisions, server, now));
  const d = input.decisions;
  let oracleHitRatio: number | null = null;
  let oracleBasis: SentinelStateSnapshot['oracleBasis'] = null;
  let tokensLost: number | null = null;
  const truthAvailable = input.servers.some((sv) => sv.storedEvents > 0);
  const joinedPrompt = total(counterKey('joinedPromptTokens'));
  const followupsWithOutcome = total(counterKey('followupsWithOutcome'));
  const idealPrompt = total(counterKey('stickyIdealPromptTokens'));
  if (joinedPrompt > 0 && input.seesWorkerEvents && truthAvailable) {
    oracleHitRatio = total(counterKey('joinedOracleCachedTokens')) / joinedPrompt;
    oracleBasis = 'worker-truth';
    tokensLost = Math.max(0, d.joinedOracleCachedTokens - d.joinedCachedTokens);
  } else if (followupsWithOutcome > 0 && idealPrompt > 0) {
    oracleHitRatio = total(counterKey('stickyIdealCachedTokens')) / idealPrompt;
    oracleBasis = 'sticky-ideal';
    tokensLost = Math.max(0, d.stickyIdealCachedTokens - d.cachedTokens);
  }
  const span = input.window;
  const seconds = span === null ? 1 : Math.max(1, (span.to - span.from) / 1000);
  const followups = total(counterKey('followups'));
  const sticky = total(counterKey('sticky'));
  const scattered = total(counterKey('scattered'));
  const decisions: DecisionStats = {
    oracleBest: total(counterKey('oracleBest')),
    notOracleBest: total(counterKey('notOracleBest')),
    noPrefix: total(counterKey('noPrefix')),
    followupTurns: followups,
    stickyTurns: sticky,
    scatteredTurns: scattered,
    scoreTerms: {
      withKeys: total(counterKey('withKeys')),
      chosenCacheTerm: total(counterKey('chosenCacheTerm')),
      bestCacheTerm: total(counterKey('bestCacheTerm')),
      withLoad: total(counterKey('loadTermReports')),
      loadSpread: total(counterKey('loadTermSpread')),
    },
  };
  // every outcome and decision is counted by its server
  const prompt = servers.reduce((n, s) => n + s.promptTokens, 0);
  const cached = servers.reduce((n, s) => n + s.cachedTokens, 0);
  return {
    now,
    verdict: held.verdict,
    findings: held.findings,
    servers,
    decisions,
    cacheHitRatio: prompt > 0 ? cached / prompt : null,
    oracleHitRatio,
    turnScatterRatio: followupsWithOutcome > 0 ? scattered / followupsWithOutcome : null,
    requests: servers.reduce((n, s) => n + s.requests, 0),
    window: span,
    tokensLostPerSecond: tokensLost === null ? null : tokensLost / seconds,
    oracleBasis,
    routerTokensPerBlock: {
      value: input.router.blockSize?.tokens ?? null,
      from: input.router.blockSize?.from ?? null,
      candidates: input.router.tokensPerBlockCandidates,
    },
    stickiness: followups > 0 ? sticky / followups : null,
    ruleErrors: held.ruleErrors,
    eventStreams: m.paths
      .streamOrigins()
      .map(([server, o]) => ({ server, engine: o.engine, hashes: o.hashes, vllmHashing: o.vllmHashing ?? null })),
    dropped: dropCounters(parts),
    sidecar: parts.sidecar.latest,
  };
}
