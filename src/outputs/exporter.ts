// The Prometheus exporter: every family of metric-catalog.ts, values computed at scrape time from one snapshot, never
// from timers. The families read from the snapshot are written as text directly (exposition-text.ts); the ones
// counted as they happen (the relay's request-duration histogram, refusals, renders) and the process's default
// metrics live on prom-client's Registry, which formats them.
//
// Decisions:
// - One snapshot per scrape: metrics() takes the view once and every family reads it.
// - A failing snapshot never fails the scrape: source health is still exported, the error is logged.
// - Every finding id and verdict is exported (0 when not active), so alerts see a series before the first firing.
import { Counter, Histogram, collectDefaultMetrics, type Registry } from 'prom-client';
import type { Logger, SourceStatus } from '../core/observe/ports.js';
import type { SentinelSnapshot } from '../core/state/snapshot.js';
import {
  SCRAPED_AFTER_EVENTS,
  SCRAPED_BEFORE_EVENTS,
  SCRAPED_STATE,
  type Labels,
  type ScrapeView,
  type ScrapedMetric,
} from './exporter-metrics.js';
import { familyText } from './exposition-text.js';
import { METRICS, type MetricSpec } from './metric-catalog.js';

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
}

export interface Exporter {
  /** Text exposition of one scrape. */
  metrics(): Promise<string>;
  readonly contentType: string;
  observeRelayDuration(server: string, seconds: number): void;
  /** requests the relay refused (counted as it happens, like the duration histogram); `by` 0 creates the series */
  countRelayRejected(server: string, reason: string, by?: number): void;
  /** a text or chat request rendered with the model's tokenizer, or why not (`reason`); `by` 0 creates the series */
  countRender(server: string, result: 'rendered' | 'failed', reason: string | null, by?: number): void;
}

/** A family counted as it happens (not read from the snapshot). */
function eventCounter(registry: Registry, spec: MetricSpec): Counter {
  return new Counter({ name: spec.name, help: spec.help, labelNames: spec.labels, registers: [registry] });
}

export function createExporter(deps: ExporterDeps): Exporter {
  const { registry, build } = deps;
  const take = (): ScrapeView => {
    let snapshot: SentinelSnapshot | null = null;
    try {
      snapshot = deps.snapshot();
    } catch (err) {
      deps.logger.error('snapshot failed during scrape', { error: String(err) });
    }
    return { snapshot, sources: deps.sources() };
  };
  const info: Labels = { version: build.version, revision: build.revision, nodejs_version: build.nodejsVersion };
  const beforeEvents: readonly ScrapedMetric[] = [
    { metric: METRICS.buildInfo, kind: 'gauge', read: () => [[info, 1]] },
    ...SCRAPED_BEFORE_EVENTS,
    { metric: METRICS.configReloadSuccessful, kind: 'gauge', read: () => [[{}, deps.reload().successful ? 1 : 0]] },
    { metric: METRICS.configReloadTimestamp, kind: 'gauge', read: () => [[{}, deps.reload().lastSuccessAt / 1000]] },
    ...SCRAPED_STATE,
  ];
  const relayDuration = new Histogram({
    name: METRICS.relayDuration.name,
    help: METRICS.relayDuration.help,
    labelNames: METRICS.relayDuration.labels,
    // CTX prefill of long prompts takes seconds; the low edges show the relay's own overhead on tiny requests
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  const relayRejected = eventCounter(registry, METRICS.relayRejected);
  const renderRequests = eventCounter(registry, METRICS.renderRequests);
  const countedNames: readonly string[] = [
    METRICS.relayDuration.name,
    METRICS.relayRejected.name,
    METRICS.renderRequests.name,
  ];

  if (deps.defaultMetrics !== false) {
    collectDefaultMetrics({ register: registry });
    // prom-client's nodejs_active_{handles,requests,resources}_total are gauges named like counters, which
    // `promtool check metrics` rejects; the per-type nodejs_active_* gauges beside them carry the same totals (sum).
    for (const name of NON_COUNTER_TOTALS) registry.removeSingleMetric(name);
  }
  const registered = (names: readonly string[]): Promise<string[]> =>
    Promise.all(names.map((name) => registry.getSingleMetricAsString(name)));
  const exposition = async (): Promise<string> => {
    const view = take();
    const scraped = (table: readonly ScrapedMetric[]): string[] =>
      table.map((m) => familyText(m.metric, m.kind, m.read(view)));
    const before = scraped(beforeEvents);
    const counted = await registered(countedNames);
    const after = scraped(SCRAPED_AFTER_EVENTS);
    const processFamilies = await registered(
      registry
        .getMetricsAsArray()
        .map((m) => m.name)
        .filter((name) => !countedNames.includes(name)),
    );
    return `${[...before, ...counted, ...after, ...processFamilies].join('\n\n')}\n`;
  };

  let scraping: Promise<string> | undefined;
  return {
    contentType: registry.contentType,
    observeRelayDuration(server, seconds) {
      relayDuration.observe({ server }, seconds);
    },
    countRelayRejected(server, reason, by = 1) {
      relayRejected.inc({ server, reason }, by);
    },
    countRender(server, result, reason, by = 1) {
      renderRequests.inc(
        { server, result: result === 'rendered' ? 'rendered' : (reason ?? 'tokenizer-error').replace(/-/g, '_') },
        by,
      );
    },
    metrics() {
      // concurrent scrapes share one snapshot and one exposition
      scraping ??= exposition().finally(() => {
        scraping = undefined;
      });
      return scraping;
    },
  };
}
