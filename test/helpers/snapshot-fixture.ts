// Hand-built snapshots for output tests (the real state builds them from observations).
import type { SentinelSnapshot, ServerStats } from '../../src/core/state/snapshot.js';
import type { Finding } from '../../src/core/diagnosis/finding.js';
import { NO_SIDECAR_STATS, type RelayCounters } from '../../src/core/observe/sidecar-stats.js';
import { noScanFallbacks } from '../../src/core/relay/scan-fallback.js';

export function serverStats(server: string, overrides: Partial<ServerStats> = {}): ServerStats {
  return {
    server,
    ranks: [
      {
        rank: 0,
        eventsByType: { created: 1, stored: 40, removed: 3, updated: 0, all_cleared: 0 },
        gaps: 2,
        missedEvents: 9,
        resets: 1,
        lastEventId: 50,
        blocksByLevel: { 0: 120, 1: 4 },
      },
    ],
    routerTableBlocks: 0,
    routerPolls: 17,
    eventsDeliveredToRouter: 44,
    eventsDroppedForConsumers: 0,
    hashChecks: { match: 40, mismatch: 0, unverifiable: 1 },
    workerTableBlocksEvicted: 0,
    historyIncomplete: [],
    routerTableBlocksEvicted: 0,
    requests: 20,
    requestFailures: 1,
    unreadableRequests: 0,
    unreadableByReason: { unknown_encoding: 0, malformed: 0, too_large: 0, no_prompt: 0 },
    promptTokens: 80_000,
    cachedTokens: 70_000,
    oracleCachedTokens: 76_000,
    predictedRouterCachedTokens: 0,
    inflight: 2,
    ...overrides,
  };
}

export const inertFinding: Finding = {
  id: 'cache-signal-inert',
  severity: 'critical',
  servers: [],
  summary: 'routing ignores where prefixes are cached',
  evidence: { decisions: 40, predicted_matches: 0 },
  cause: '§7.1',
  fix: 'event_buffer_max_size: 1024',
  since: 1_000,
};

export function snapshotFixture(overrides: Partial<SentinelSnapshot> = {}): SentinelSnapshot {
  return {
    now: 10_000,
    verdict: 'inert',
    findings: [inertFinding],
    servers: [serverStats('ctx0'), serverStats('ctx1', { routerTableBlocks: 5 })],
    decisions: {
      oracleBest: 10,
      notOracleBest: 25,
      noPrefix: 5,
      followupTurns: 30,
      stickyTurns: 12,
      scatteredTurns: 4,
      scoreTerms: { withKeys: 40, chosenCacheTerm: 8, bestCacheTerm: 20, withLoad: 40, loadSpread: 6 },
    },
    cacheHitRatio: 0.875,
    oracleHitRatio: 0.95,
    turnScatterRatio: 4 / 30,
    requests: 40,
    dropped: {
      trajectoriesEvicted: 0,
      pendingDecisionsEvicted: 0,
      pendingDecisionsExpired: 0,
      trajectoriesExpired: 0,
      relayEventsDropped: 0,
      relayEventsMissed: 0,
      sourcesIgnored: 0,
      outcomesWithoutDecision: 0,
      scoreJoinsEvicted: 0,
      incrementalKeysEvicted: 0,
      v2KeysEvicted: 0,
      serverObservationsIgnored: 0,
    },
    sidecar: NO_SIDECAR_STATS,
    ...overrides,
  };
}

/** One relay's cumulative counters, 0 unless given. */
export function relayCounters(server: string, overrides: Partial<RelayCounters> = {}): RelayCounters {
  return {
    server,
    abandonedPolls: 0,
    capturesTruncated: 0,
    eventsEvicted: 0,
    consumersExpired: 0,
    consumersEvicted: 0,
    resumePositionsDiscarded: 0,
    readHistoryReleased: 0,
    upstreamRetries: 0,
    eventsRedelivered: 0,
    scanFallbacks: noScanFallbacks(),
    ...overrides,
  };
}
