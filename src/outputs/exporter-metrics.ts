// What /metrics reads of one scrape's view, as a table: each family of metric-catalog.ts and how its samples come
// out of the state's snapshot (or the status board's rows). The exporter registers them in this order; a counter's
// samples are cumulative values, re-set on each scrape.
import {
  FINDING_CATALOG,
  FINDING_IDS,
  GRADED_FINDINGS,
  SEVERITIES,
  severityRank,
} from '../core/diagnosis/finding-catalog.js';
import type { Verdict } from '../core/diagnosis/verdict.js';
import type { SourceStatus } from '../core/observe/ports.js';
import {
  NO_SIDECAR_STATS,
  type ForwardCounters,
  type RelayCounters,
  type SidecarStats,
  type StreamRankCounters,
} from '../core/observe/sidecar-stats.js';
import { REQUEST_UNREADABLE_REASONS } from '../core/relay/request-unreadable.js';
import { SCAN_FALLBACK_REASONS } from '../core/relay/scan-fallback.js';
import type { RankStats, SentinelSnapshot, ServerStats } from '../core/state/snapshot.js';
import type { KvEventType } from '../core/wire/kv-event.js';
import { CACHE_DROPS, METRICS, type CacheDropKey, type MetricSpec } from './metric-catalog.js';

/** What one scrape reads: the snapshot (null when taking it failed) and the status board's rows. */
export interface ScrapeView {
  readonly snapshot: SentinelSnapshot | null;
  readonly sources: readonly SourceStatus[];
}

export type Labels = Record<string, string>;
export type Sample = readonly [Labels, number];

/** One family read at scrape time. */
export interface ScrapedMetric {
  readonly metric: MetricSpec;
  readonly kind: 'counter' | 'gauge';
  read(view: ScrapeView): readonly Sample[];
}

const EVENT_TYPES: readonly KvEventType[] = ['created', 'stored', 'removed', 'updated', 'all_cleared'];
const VERDICTS: readonly Verdict[] = ['healthy', 'degraded', 'unknown', 'inert'];

const serversOf = (v: ScrapeView): readonly ServerStats[] => v.snapshot?.servers ?? [];
const sidecarOf = (v: ScrapeView): SidecarStats => v.snapshot?.sidecar ?? NO_SIDECAR_STATS;

const counter = (metric: MetricSpec, read: (v: ScrapeView) => readonly Sample[]): ScrapedMetric => ({
  metric,
  kind: 'counter',
  read,
});
const gauge = (metric: MetricSpec, read: (v: ScrapeView) => readonly Sample[]): ScrapedMetric => ({
  metric,
  kind: 'gauge',
  read,
});
const perServer = (
  metric: MetricSpec,
  pick: (s: ServerStats) => number,
  kind: 'counter' | 'gauge' = 'counter',
): ScrapedMetric => ({ metric, kind, read: (v) => serversOf(v).map((s) => [{ server: s.server }, pick(s)]) });
const perRank = (metric: MetricSpec, pick: (r: RankStats) => number): ScrapedMetric =>
  counter(metric, (v) =>
    serversOf(v).flatMap((s) => s.ranks.map((r): Sample => [{ server: s.server, rank: String(r.rank) }, pick(r)])),
  );
const perStream = (metric: MetricSpec, pick: (c: StreamRankCounters) => number): ScrapedMetric =>
  counter(metric, (v) => sidecarOf(v).streams.map((c) => [{ server: c.server, rank: String(c.rank) }, pick(c)]));
const perRelay = (metric: MetricSpec, pick: (r: RelayCounters) => number): ScrapedMetric =>
  counter(metric, (v) => sidecarOf(v).relays.map((r) => [{ server: r.server }, pick(r)]));
const perForward = (
  metric: MetricSpec,
  pick: (f: ForwardCounters) => number,
  kind: 'counter' | 'gauge' = 'counter',
): ScrapedMetric => ({
  metric,
  kind,
  read: (v) => sidecarOf(v).forwards.map((f) => [{ endpoint: f.endpoint, to: f.to }, pick(f)]),
});

/** Every cache drop counter (relays' summed); state counters read 0 while no snapshot is available. */
function cacheDrops(snapshot: SentinelSnapshot | null): Record<CacheDropKey, number> {
  const d = snapshot?.dropped;
  const { relays, feed } = snapshot?.sidecar ?? NO_SIDECAR_STATS;
  const sum = (pick: (r: RelayCounters) => number): number => relays.reduce((n, r) => n + pick(r), 0);
  return {
    'trajectories:cap': d?.trajectoriesEvicted ?? 0,
    'trajectories:idle': d?.trajectoriesExpired ?? 0,
    'pending_decisions:cap': d?.pendingDecisionsEvicted ?? 0,
    'pending_decisions:ttl': d?.pendingDecisionsExpired ?? 0,
    'replica_events:cap': d?.relayEventsDropped ?? 0,
    'sources:cap': d?.sourcesIgnored ?? 0,
    'score_joins:cap': d?.scoreJoinsEvicted ?? 0,
    'incremental_keys:cap': d?.incrementalKeysEvicted ?? 0,
    'v2_keys:cap': d?.v2KeysEvicted ?? 0,
    'servers:cap': d?.serverObservationsIgnored ?? 0,
    'relay_events:cap': sum((r) => r.eventsEvicted),
    'relay_consumers:idle': sum((r) => r.consumersExpired),
    'relay_consumers:cap': sum((r) => r.consumersEvicted),
    'relay_resume_positions:cap': sum((r) => r.resumePositionsDiscarded),
    'relay_read_history:budget': sum((r) => r.readHistoryReleased),
    'relay_captures:cap': sum((r) => r.capturesTruncated),
    'ws_frames:slow_client': feed.droppedFrames,
    'ws_clients:cap': feed.refusedClients,
  };
}

function findingActive(snapshot: SentinelSnapshot | null): Sample[] {
  if (snapshot === null) return [];
  const active = new Map(snapshot.findings.map((f) => [f.id, f.severity]));
  return FINDING_IDS.flatMap((id): Sample[] => [
    [{ id, severity: FINDING_CATALOG[id] }, active.get(id) === FINDING_CATALOG[id] ? 1 : 0],
    // a graded finding holding below its catalog severity: its own series, so the critical alert stays quiet
    ...(GRADED_FINDINGS.includes(id)
      ? SEVERITIES.filter((s) => severityRank(s) < severityRank(FINDING_CATALOG[id])).map((severity): Sample => [
          { id, severity },
          active.get(id) === severity ? 1 : 0,
        ])
      : []),
  ]);
}

function findingServerActive(snapshot: SentinelSnapshot | null): Sample[] {
  if (snapshot === null) return [];
  // every (finding, severity, server) exists, at 0 unless it holds: alerts resolve when a server's finding clears
  const holding = new Set(
    snapshot.findings.flatMap((f) =>
      (f.servers.length > 0 ? f.servers : ['']).map((server) => `${f.id}|${f.severity}|${server}`),
    ),
  );
  const servers = [
    '',
    ...new Set([...snapshot.servers.map((s) => s.server), ...snapshot.findings.flatMap((f) => f.servers)]),
  ];
  return FINDING_IDS.flatMap((id) =>
    (GRADED_FINDINGS.includes(id)
      ? SEVERITIES.filter((s) => severityRank(s) <= severityRank(FINDING_CATALOG[id]))
      : [FINDING_CATALOG[id]]
    ).flatMap((severity) =>
      servers.map((server): Sample => [{ id, severity, server }, holding.has(`${id}|${severity}|${server}`) ? 1 : 0]),
    ),
  );
}

/** The families before the ones counted as they happen (the relay's duration histogram, refusals, renders). */
export const SCRAPED_BEFORE_EVENTS: readonly ScrapedMetric[] = [
  gauge(METRICS.up, (v) => v.sources.map((s) => [{ source: s.source }, s.up ? 1 : 0])),
  counter(METRICS.sourceErrors, (v) =>
    v.sources.flatMap((s) => Object.entries(s.errors).map(([reason, n]): Sample => [{ source: s.source, reason }, n])),
  ),
  counter(METRICS.badInput, (v) =>
    v.sources.flatMap((s) => Object.entries(s.badInput).map(([code, n]): Sample => [{ source: s.source, code }, n])),
  ),
];

/** After the reload gauges: the state's counters and the sidecar's own. */
export const SCRAPED_STATE: readonly ScrapedMetric[] = [
  counter(METRICS.kvEvents, (v) =>
    serversOf(v).flatMap((s) =>
      s.ranks.flatMap((r) =>
        EVENT_TYPES.map((type): Sample => [
          { server: s.server, rank: String(r.rank), type },
          r.eventsByType[type] ?? 0,
        ]),
      ),
    ),
  ),
  perRank(METRICS.kvEventGaps, (r) => r.gaps),
  perRank(METRICS.kvEventsMissed, (r) => r.missedEvents),
  perRank(METRICS.kvEventResets, (r) => r.resets),
  perStream(METRICS.streamBatches, (c) => c.batches),
  perStream(METRICS.streamBatchesReplayed, (c) => c.replayedBatches),
  perStream(METRICS.streamBatchesLost, (c) => c.lostBatches),
  perStream(METRICS.streamMalformed, (c) => c.malformed),
  perStream(METRICS.streamBlocksUnresolved, (c) => c.unresolvedBlocks),
  perStream(METRICS.streamUnmatchedRemovals, (c) => c.unmatchedRemovals),
  perForward(METRICS.streamForwarded, (f) => f.forwarded),
  perForward(METRICS.streamForwardFailures, (f) => f.failed),
  perForward(METRICS.streamForwardConnected, (f) => (f.connected ? 1 : 0), 'gauge'),
  gauge(METRICS.streamHistoryIncompleteSince, (v) =>
    serversOf(v).flatMap((s) =>
      s.historyIncomplete.map((h): Sample => [{ server: s.server, rank: String(h.rank) }, h.since / 1000]),
    ),
  ),
  perServer(METRICS.relayEventsDropped, (s) => s.eventsDroppedForConsumers),
  perServer(METRICS.routerPolls, (s) => s.routerPolls),
  perRelay(METRICS.relayAbandonedPolls, (r) => r.abandonedPolls),
  perRelay(METRICS.relayEventsRedelivered, (r) => r.eventsRedelivered),
  perRelay(METRICS.relayUpstreamRetries, (r) => r.upstreamRetries),
  counter(METRICS.relayScanFallbacks, (v) =>
    sidecarOf(v).relays.flatMap((r) =>
      SCAN_FALLBACK_REASONS.map((reason): Sample => [{ server: r.server, reason }, r.scanFallbacks[reason]]),
    ),
  ),
  perServer(METRICS.relayEventsDelivered, (s) => s.eventsDeliveredToRouter),
  counter(METRICS.hashChecks, (v) =>
    serversOf(v).flatMap((s): Sample[] => [
      [{ server: s.server, result: 'match' }, s.hashChecks.match],
      [{ server: s.server, result: 'mismatch' }, s.hashChecks.mismatch],
      [{ server: s.server, result: 'unverifiable' }, s.hashChecks.unverifiable],
    ]),
  ),
  gauge(METRICS.workerTableBlocks, (v) =>
    serversOf(v).flatMap((s) =>
      s.ranks.flatMap((r) =>
        Object.entries(r.blocksByLevel).map(([level, n]): Sample => [
          { server: s.server, rank: String(r.rank), cache_level: level },
          n,
        ]),
      ),
    ),
  ),
  perServer(METRICS.routerTableBlocks, (s) => s.routerTableBlocks, 'gauge'),
  counter(METRICS.tableBlocksEvicted, (v) =>
    serversOf(v).flatMap((s): Sample[] => [
      [{ server: s.server, table: 'worker' }, s.workerTableBlocksEvicted],
      [{ server: s.server, table: 'router' }, s.routerTableBlocksEvicted],
    ]),
  ),
  counter(METRICS.cacheDropped, (v) => {
    const counts = cacheDrops(v.snapshot);
    return CACHE_DROPS.map(([cache, reason]): Sample => [
      { cache, reason },
      counts[`${cache}:${reason}` as CacheDropKey],
    ]);
  }),
  perServer(METRICS.requests, (s) => s.requests),
  perServer(METRICS.requestFailures, (s) => s.requestFailures),
  perServer(METRICS.promptTokens, (s) => s.promptTokens),
  perServer(METRICS.cachedTokens, (s) => s.cachedTokens),
  perServer(METRICS.oracleCachedTokens, (s) => s.oracleCachedTokens),
  perServer(METRICS.predictedRouterCachedTokens, (s) => s.predictedRouterCachedTokens),
  counter(METRICS.decisions, (v) => {
    const d = v.snapshot?.decisions;
    if (d === undefined) return [];
    return [
      [{ outcome: 'oracle_best' }, d.oracleBest],
      [{ outcome: 'not_oracle_best' }, d.notOracleBest],
      [{ outcome: 'no_prefix' }, d.noPrefix],
    ];
  }),
  counter(METRICS.followupTurns, (v) => {
    const d = v.snapshot?.decisions;
    return d !== undefined ? [[{}, d.followupTurns]] : [];
  }),
  counter(METRICS.scatteredTurns, (v) => {
    const d = v.snapshot?.decisions;
    return d !== undefined ? [[{}, d.scatteredTurns]] : [];
  }),
  perServer(METRICS.inflightRequests, (s) => s.inflight, 'gauge'),
];

/** After the families counted as they happen: unreadable requests (per relay, from the state) and the findings. */
export const SCRAPED_AFTER_EVENTS: readonly ScrapedMetric[] = [
  counter(METRICS.relayUnreadable, (v) => {
    // every relay has every reason's series, at 0 until one comes, so rate() and the dashboards see it
    const byServer = new Map(serversOf(v).map((s) => [s.server, s.unreadableByReason]));
    return sidecarOf(v).relays.flatMap((r) =>
      REQUEST_UNREADABLE_REASONS.map((reason): Sample => [
        { server: r.server, reason },
        byServer.get(r.server)?.[reason] ?? 0,
      ]),
    );
  }),
  gauge(METRICS.findingActive, (v) => findingActive(v.snapshot)),
  gauge(METRICS.findingServerActive, (v) => findingServerActive(v.snapshot)),
  gauge(METRICS.verdict, (v) => {
    const snapshot = v.snapshot;
    if (snapshot === null) return [];
    return VERDICTS.map((verdict): Sample => [{ verdict }, snapshot.verdict === verdict ? 1 : 0]);
  }),
];
