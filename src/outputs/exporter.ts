// The Prometheus exporter: every family of metric-catalog.ts on its own Registry, values computed at scrape time
// from one snapshot (prom-client collect()), never from timers. Counters are cumulative values of the snapshot,
// re-set on each scrape. The relay's request-duration histogram is the one family observed as it happens.
//
// Decisions:
// - One snapshot per scrape: metrics() takes the view once and every collect() reads it.
// - A failing snapshot never fails the scrape: source health is still exported, the error is logged.
// - Every finding id and verdict is exported (0 when not active), so alerts see a series before the first firing.
import { Counter, Gauge, Histogram, collectDefaultMetrics, type Registry } from 'prom-client';
import {
  FINDING_CATALOG,
  FINDING_IDS,
  GRADED_FINDINGS,
  SEVERITIES,
  severityRank,
} from '../core/diagnosis/finding-catalog.js';
import type { SentinelSnapshot, ServerStats } from '../core/state/snapshot.js';
import { SCAN_FALLBACK_REASONS } from '../core/relay/scan-fallback.js';
import type { KvEventType } from '../core/wire/kv-event.js';
import type { Logger } from '../sources/ports.js';
import type { RelayCounters } from '../sources/relay/worker-relay.js';
import type { StreamRankCounters } from '../sources/zmq/stream-counters.js';
import type { ForwardCounters } from '../sources/zmq/zmq-bind-source.js';
import type { SourceStatus } from '../sources/source-status.js';
import { CACHE_DROPS, METRICS, type CacheDropKey, type MetricSpec } from './metric-catalog.js';
import type { Verdict } from '../core/diagnosis/verdict.js';

/** default process metrics that are gauges with a counter's suffix (see collectDefaultMetrics below) */
const NON_COUNTER_TOTALS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
] as const;
export interface ReloadStatus {
  readonly successful: boolean;
  /** ms since epoch of the last successful (re)load */
  readonly lastSuccessAt: number;
}

export interface BuildInfo {
  readonly version: string;
  readonly revision: string;
  readonly nodejsVersion: string;
}

export interface ExporterDeps {
  readonly registry: Registry;
  readonly sources: () => readonly SourceStatus[];
  readonly snapshot: () => SentinelSnapshot;
  readonly reload: () => ReloadStatus;
  readonly build: BuildInfo;
  readonly logger: Logger;
  /** default process/nodejs metrics, unprefixed (docs/design.md §6) */
  readonly defaultMetrics?: boolean;
  /** per relay (cumulative across reloads): abandoned polls and what its bounded caches dropped */
  readonly relays?: () => readonly RelayCounters[];
  /** per ZMQ stream rank: batches, replays, losses, malformed input */
  readonly streams?: () => readonly StreamRankCounters[];
  /** per bound socket that forwards (--zmq-bind forward=): messages passed on, failures, the consumer's link */
  readonly forwards?: () => readonly ForwardCounters[];
  /** the live feed's drops */
  readonly feed?: () => { readonly droppedFrames: number; readonly refusedClients: number };
}

export interface Exporter {
  /** Text exposition of one scrape. */
  metrics(): Promise<string>;
  readonly contentType: string;
  observeRelayDuration(server: string, seconds: number): void;
  /** requests the relay refused (counted as it happens, like the duration histogram); `by` 0 creates the series */
  countRelayRejected(server: string, reason: string, by?: number): void;
  /** CTX requests whose prompt or ids the relay could not read; `by` 0 creates the series */
  countRelayUnreadable(server: string, reason: string, by?: number): void;
  /** a text or chat request rendered with the model's tokenizer, or why not (`reason`); `by` 0 creates the series */
  countRender(server: string, result: 'rendered' | 'failed', reason: string | null, by?: number): void;
}

const EVENT_TYPES: readonly KvEventType[] = ['created', 'stored', 'removed', 'updated', 'all_cleared'];
const VERDICTS: readonly Verdict[] = ['healthy', 'degraded', 'unknown', 'inert'];

type Labels = Record<string, string>;

/** Every cache drop counter, summed over relays; state counters read 0 while no snapshot is available. */
function cacheDrops(
  snapshot: SentinelSnapshot | null,
  relays: readonly RelayCounters[],
  feed: { droppedFrames: number; refusedClients: number } | null,
): Record<CacheDropKey, number> {
  const d = snapshot?.dropped;
  const sum = (pick: (r: RelayCounters) => number): number => relays.reduce((n, r) => n + pick(r), 0);
  return {
    'trajectories/cap': d?.trajectoriesEvicted ?? 0,
    'pending_decisions/cap': d?.pendingDecisionsEvicted ?? 0,
    'pending_decisions/ttl': d?.pendingDecisionsExpired ?? 0,
    'replica_events/cap': d?.relayEventsDropped ?? 0,
    'sources/cap': d?.sourcesIgnored ?? 0,
    'score_joins/cap': d?.scoreJoinsEvicted ?? 0,
    'incremental_keys/cap': d?.incrementalKeysEvicted ?? 0,
    'v2_keys/cap': d?.v2KeysEvicted ?? 0,
    'servers/cap': d?.serverObservationsIgnored ?? 0,
    'relay_events/cap': sum((r) => r.eventsEvicted),
    'relay_consumers/idle': sum((r) => r.consumersExpired),
    'relay_consumers/cap': sum((r) => r.consumersEvicted),
    'relay_resume_positions/cap': sum((r) => r.resumePositionsDiscarded),
    'relay_captures/cap': sum((r) => r.capturesTruncated),
    'ws_frames/slow_client': feed?.droppedFrames ?? 0,
    'ws_clients/cap': feed?.refusedClients ?? 0,
  };
}

export function createExporter(deps: ExporterDeps): Exporter {
  const { registry } = deps;
  let current: { snapshot: SentinelSnapshot | null; sources: readonly SourceStatus[] } | null = null;
  const view = (): { snapshot: SentinelSnapshot | null; sources: readonly SourceStatus[] } => {
    if (current !== null) return current;
    // a collect outside metrics() (e.g. registry.getMetricsAsJSON) still gets a consistent view
    return take();
  };
  const take = (): { snapshot: SentinelSnapshot | null; sources: readonly SourceStatus[] } => {
    let snapshot: SentinelSnapshot | null = null;
    try {
      snapshot = deps.snapshot();
    } catch (err) {
      deps.logger.error('snapshot failed during scrape', { error: String(err) });
    }
    return { snapshot, sources: deps.sources() };
  };

  const gauge = (spec: MetricSpec, fill: (set: (labels: Labels, value: number) => void) => void): void => {
    new Gauge({
      name: spec.name,
      help: spec.help,
      labelNames: spec.labels,
      registers: [registry],
      collect() {
        this.reset();
        fill((labels, value) => this.set(labels, value));
      },
    });
  };
  const counter = (spec: MetricSpec, fill: (set: (labels: Labels, value: number) => void) => void): void => {
    new Counter({
      name: spec.name,
      help: spec.help,
      labelNames: spec.labels,
      registers: [registry],
      collect() {
        this.reset();
        fill((labels, value) => this.inc(labels, value));
      },
    });
  };
  const perServer = (
    spec: MetricSpec,
    pick: (s: ServerStats) => number,
    kind: 'counter' | 'gauge' = 'counter',
  ): void => {
    const fill = (set: (labels: Labels, value: number) => void): void => {
      for (const s of view().snapshot?.servers ?? []) set({ server: s.server }, pick(s));
    };
    if (kind === 'counter') counter(spec, fill);
    else gauge(spec, fill);
  };
  const perRank = (spec: MetricSpec, pick: (r: ServerStats['ranks'][number]) => number): void => {
    counter(spec, (set) => {
      for (const s of view().snapshot?.servers ?? [])
        for (const r of s.ranks) set({ server: s.server, rank: String(r.rank) }, pick(r));
    });
  };

  gauge(METRICS.buildInfo, (set) =>
    set({ version: deps.build.version, revision: deps.build.revision, nodejs_version: deps.build.nodejsVersion }, 1),
  );
  gauge(METRICS.up, (set) => {
    for (const s of view().sources) set({ source: s.source }, s.up ? 1 : 0);
  });
  counter(METRICS.sourceErrors, (set) => {
    for (const s of view().sources)
      for (const [reason, n] of Object.entries(s.errors)) set({ source: s.source, reason }, n);
  });
  counter(METRICS.badInput, (set) => {
    for (const s of view().sources)
      for (const [code, n] of Object.entries(s.badInput)) set({ source: s.source, code }, n);
  });
  gauge(METRICS.configReloadSuccessful, (set) => set({}, deps.reload().successful ? 1 : 0));
  gauge(METRICS.configReloadTimestamp, (set) => set({}, deps.reload().lastSuccessAt / 1000));

  counter(METRICS.kvEvents, (set) => {
    for (const s of view().snapshot?.servers ?? []) {
      for (const r of s.ranks)
        for (const type of EVENT_TYPES)
          set({ server: s.server, rank: String(r.rank), type }, r.eventsByType[type] ?? 0);
    }
  });
  perRank(METRICS.kvEventGaps, (r) => r.gaps);
  perRank(METRICS.kvEventsMissed, (r) => r.missedEvents);
  perRank(METRICS.kvEventResets, (r) => r.resets);
  const perStream = (m: MetricSpec, pick: (c: StreamRankCounters) => number): void =>
    counter(m, (set) => {
      for (const c of deps.streams?.() ?? []) set({ server: c.server, rank: String(c.rank) }, pick(c));
    });
  perStream(METRICS.streamBatches, (c) => c.batches);
  perStream(METRICS.streamBatchesReplayed, (c) => c.replayedBatches);
  perStream(METRICS.streamBatchesLost, (c) => c.lostBatches);
  perStream(METRICS.streamMalformed, (c) => c.malformed);
  perStream(METRICS.streamBlocksUnresolved, (c) => c.unresolvedBlocks);
  perStream(METRICS.streamUnmatchedRemovals, (c) => c.unmatchedRemovals);
  counter(METRICS.streamForwarded, (set) => {
    for (const f of deps.forwards?.() ?? []) set({ endpoint: f.endpoint, to: f.to }, f.forwarded);
  });
  counter(METRICS.streamForwardFailures, (set) => {
    for (const f of deps.forwards?.() ?? []) set({ endpoint: f.endpoint, to: f.to }, f.failed);
  });
  gauge(METRICS.streamForwardConnected, (set) => {
    for (const f of deps.forwards?.() ?? []) set({ endpoint: f.endpoint, to: f.to }, f.connected ? 1 : 0);
  });
  gauge(METRICS.streamHistoryIncompleteSince, (set) => {
    for (const s of view().snapshot?.servers ?? [])
      for (const h of s.historyIncomplete) set({ server: s.server, rank: String(h.rank) }, h.since / 1000);
  });
  perServer(METRICS.relayEventsDropped, (s) => s.eventsDroppedForConsumers);
  perServer(METRICS.routerPolls, (s) => s.routerPolls);
  counter(METRICS.relayAbandonedPolls, (set) => {
    for (const r of deps.relays?.() ?? []) set({ server: r.server }, r.abandonedPolls);
  });
  counter(METRICS.relayEventsRedelivered, (set) => {
    for (const r of deps.relays?.() ?? []) set({ server: r.server }, r.eventsRedelivered);
  });
  counter(METRICS.relayUpstreamRetries, (set) => {
    for (const r of deps.relays?.() ?? []) set({ server: r.server }, r.upstreamRetries);
  });
  counter(METRICS.relayScanFallbacks, (set) => {
    for (const r of deps.relays?.() ?? [])
      for (const reason of SCAN_FALLBACK_REASONS) set({ server: r.server, reason }, r.scanFallbacks[reason]);
  });
  perServer(METRICS.relayEventsDelivered, (s) => s.eventsDeliveredToRouter);
  counter(METRICS.hashChecks, (set) => {
    for (const s of view().snapshot?.servers ?? []) {
      set({ server: s.server, result: 'match' }, s.hashChecks.match);
      set({ server: s.server, result: 'mismatch' }, s.hashChecks.mismatch);
      set({ server: s.server, result: 'unverifiable' }, s.hashChecks.unverifiable);
    }
  });
  gauge(METRICS.workerTableBlocks, (set) => {
    for (const s of view().snapshot?.servers ?? []) {
      for (const r of s.ranks) {
        for (const [level, n] of Object.entries(r.blocksByLevel))
          set({ server: s.server, rank: String(r.rank), cache_level: level }, n);
      }
    }
  });
  perServer(METRICS.routerTableBlocks, (s) => s.routerTableBlocks, 'gauge');
  counter(METRICS.tableBlocksEvicted, (set) => {
    for (const s of view().snapshot?.servers ?? []) {
      set({ server: s.server, table: 'worker' }, s.workerTableBlocksEvicted);
      set({ server: s.server, table: 'router' }, s.routerTableBlocksEvicted);
    }
  });
  counter(METRICS.cacheDropped, (set) => {
    const counts = cacheDrops(view().snapshot, deps.relays?.() ?? [], deps.feed?.() ?? null);
    for (const [cache, reason] of CACHE_DROPS) set({ cache, reason }, counts[`${cache}/${reason}` as CacheDropKey]);
  });
  perServer(METRICS.requests, (s) => s.requests);
  perServer(METRICS.requestFailures, (s) => s.requestFailures);
  perServer(METRICS.promptTokens, (s) => s.promptTokens);
  perServer(METRICS.cachedTokens, (s) => s.cachedTokens);
  perServer(METRICS.oracleCachedTokens, (s) => s.oracleCachedTokens);
  perServer(METRICS.predictedRouterCachedTokens, (s) => s.predictedRouterCachedTokens);
  counter(METRICS.decisions, (set) => {
    const d = view().snapshot?.decisions;
    if (d === undefined) return;
    set({ outcome: 'oracle_best' }, d.oracleBest);
    set({ outcome: 'not_oracle_best' }, d.notOracleBest);
    set({ outcome: 'no_prefix' }, d.noPrefix);
  });
  counter(METRICS.followupTurns, (set) => {
    const d = view().snapshot?.decisions;
    if (d !== undefined) set({}, d.followupTurns);
  });
  counter(METRICS.scatteredTurns, (set) => {
    const d = view().snapshot?.decisions;
    if (d !== undefined) set({}, d.scatteredTurns);
  });
  perServer(METRICS.inflightRequests, (s) => s.inflight, 'gauge');
  const relayDuration = new Histogram({
    name: METRICS.relayDuration.name,
    help: METRICS.relayDuration.help,
    labelNames: METRICS.relayDuration.labels,
    // CTX prefill of long prompts takes seconds; the low edges show the relay's own overhead on tiny requests
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  const relayRejected = new Counter({
    name: METRICS.relayRejected.name,
    help: METRICS.relayRejected.help,
    labelNames: METRICS.relayRejected.labels,
    registers: [registry],
  });
  const renderRequests = new Counter({
    name: METRICS.renderRequests.name,
    help: METRICS.renderRequests.help,
    labelNames: METRICS.renderRequests.labels,
    registers: [registry],
  });
  const relayUnreadable = new Counter({
    name: METRICS.relayUnreadable.name,
    help: METRICS.relayUnreadable.help,
    labelNames: METRICS.relayUnreadable.labels,
    registers: [registry],
  });
  gauge(METRICS.findingActive, (set) => {
    const snapshot = view().snapshot;
    if (snapshot === null) return;
    const active = new Map(snapshot.findings.map((f) => [f.id, f.severity]));
    for (const id of FINDING_IDS) {
      set({ id, severity: FINDING_CATALOG[id] }, active.get(id) === FINDING_CATALOG[id] ? 1 : 0);
      // a graded finding holding below its catalog severity: its own series, so the critical alert stays quiet
      if (GRADED_FINDINGS.includes(id))
        for (const severity of SEVERITIES.filter((s) => severityRank(s) < severityRank(FINDING_CATALOG[id])))
          set({ id, severity }, active.get(id) === severity ? 1 : 0);
    }
  });
  gauge(METRICS.findingServerActive, (set) => {
    const snapshot = view().snapshot;
    if (snapshot === null) return;
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
    for (const id of FINDING_IDS) {
      const severities = GRADED_FINDINGS.includes(id)
        ? SEVERITIES.filter((s) => severityRank(s) <= severityRank(FINDING_CATALOG[id]))
        : [FINDING_CATALOG[id]];
      for (const severity of severities)
        for (const server of servers) set({ id, severity, server }, holding.has(`${id}|${severity}|${server}`) ? 1 : 0);
    }
  });
  gauge(METRICS.verdict, (set) => {
    const snapshot = view().snapshot;
    if (snapshot === null) return;
    for (const v of VERDICTS) set({ verdict: v }, snapshot.verdict === v ? 1 : 0);
  });

  if (deps.defaultMetrics !== false) {
    collectDefaultMetrics({ register: registry });
    // prom-client's nodejs_active_{handles,requests,resources}_total are gauges named like counters, which
    // `promtool check metrics` rejects; the per-type nodejs_active_* gauges beside them carry the same totals (sum).
    for (const name of NON_COUNTER_TOTALS) registry.removeSingleMetric(name);
  }

  let scraping: Promise<string> | undefined;
  return {
    contentType: registry.contentType,
    observeRelayDuration(server, seconds) {
      relayDuration.observe({ server }, seconds);
    },
    countRelayRejected(server, reason, by = 1) {
      relayRejected.inc({ server, reason }, by);
    },
    countRelayUnreadable(server, reason, by = 1) {
      relayUnreadable.inc({ server, reason }, by);
    },
    countRender(server, result, reason, by = 1) {
      renderRequests.inc(
        { server, result: result === 'rendered' ? 'rendered' : (reason ?? 'tokenizer-error').replace(/-/g, '_') },
        by,
      );
    },
    metrics() {
      // concurrent scrapes share one snapshot and one exposition
      scraping ??= (async () => {
        current = take();
        try {
          return await registry.metrics();
        } finally {
          current = null;
          scraping = undefined;
        }
      })();
      return scraping;
    },
  };
}
