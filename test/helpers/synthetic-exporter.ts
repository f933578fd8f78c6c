// A stand-in for the kvsentinel exporter, generated from the metric catalog: every family, every label, plausible
// values, counters that grow with time. It proves the Prometheus → Alertmanager → webhook chain and every dashboard
// query against every family and label; live-sim-target.ts scrapes the real sidecar (see scrape-targets.ts).
import { createServer } from 'node:http';
import { FINDING_CATALOG, FINDING_IDS, type FindingId } from '../../src/core/diagnosis/finding-catalog.js';
import { METRICS, type MetricSpec } from '../../src/outputs/metric-catalog.js';
import { closeServer, listen } from './prom-stack.js';

/** Label values per label name; a catalog label missing here fails loudly so the table follows the catalog. */
const LABEL_VALUES: Record<string, readonly string[]> = {
  version: ['0.1.0'],
  revision: ['synthetic'],
  nodejs_version: [process.version],
  source: ['ctx0', 'ctx1', 'ctx2'],
  reason: ['connect', 'timeout'],
  code: ['bad_hash'],
  server: ['ctx0', 'ctx1', 'ctx2'],
  rank: ['0', '1'],
  type: ['created', 'stored', 'removed', 'updated'],
  result: ['match', 'mismatch', 'unverifiable'],
  cache_level: ['0', '1'],
  outcome: ['oracle_best', 'not_oracle_best', 'no_prefix'],
  table: ['worker', 'router'],
  cache: ['trajectories', 'relay_events'],
  endpoint: ['tcp://*:5557'],
  to: ['tcp://scheduler-epp:5557'],
};

export interface SyntheticScenario {
  /** Finding ids that hold (exported as 1; every other catalog finding is exported as 0). */
  readonly findings: readonly FindingId[];
  readonly verdict: 'healthy' | 'degraded' | 'unknown' | 'inert';
}

/**
 * What the diagnosis reports for the simulator's seed preset: events off (event_buffer_max_size 0) and the router's
 * tokens_per_block 32 against 128-token worker blocks, so the cache signal is inert.
 */
export const SEED_LIKE: SyntheticScenario = {
  findings: ['cache-signal-inert', 'events-absent', 'tokens-per-block-mismatch', 'hit-rate-below-oracle'],
  verdict: 'inert',
};
export const HEALTHY: SyntheticScenario = { findings: [], verdict: 'healthy' };

function labelSets(names: readonly string[]): Record<string, string>[] {
  let sets: Record<string, string>[] = [{}];
  for (const n of names) {
    const values = LABEL_VALUES[n];
    if (values === undefined) throw new Error(`synthetic exporter: no values for label "${n}"; add it to LABEL_VALUES`);
    sets = sets.flatMap((s) => values.map((v) => ({ ...s, [n]: v })));
  }
  return sets;
}

function fmt(labels: Record<string, string>): string {
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`);
  return parts.length === 0 ? '' : `{${parts.join(',')}}`;
}

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];

/** The exposition text at `elapsed` seconds after start. Deterministic. */
export function syntheticExposition(scenario: SyntheticScenario, elapsed: number): string {
  const active = new Set<string>(scenario.findings);
  const lines: string[] = [];
  const t = Math.max(elapsed, 0);
  for (const m of Object.values<MetricSpec>(METRICS)) {
    lines.push(`# HELP ${m.name} ${m.help}`, `# TYPE ${m.name} ${m.type}`);
    if (m.name === METRICS.findingActive.name) {
      for (const id of FINDING_IDS)
        lines.push(`${m.name}${fmt({ id, severity: FINDING_CATALOG[id] })} ${active.has(id) ? 1 : 0}`);
      continue;
    }
    if (m.name === METRICS.findingServerActive.name) {
      // the synthetic cluster's findings are about ctx0
      for (const id of FINDING_IDS)
        for (const server of ['', 'ctx0', 'ctx1'])
          lines.push(
            `${m.name}${fmt({ id, severity: FINDING_CATALOG[id], server })} ${active.has(id) && server === 'ctx0' ? 1 : 0}`,
          );
      continue;
    }
    if (m.name === METRICS.verdict.name) {
      for (const v of ['healthy', 'degraded', 'unknown', 'inert'])
        lines.push(`${m.name}${fmt({ verdict: v })} ${v === scenario.verdict ? 1 : 0}`);
      continue;
    }
    labelSets(m.labels).forEach((labels, i) => {
      if (m.type === 'histogram') {
        const n = Math.floor(t * 10);
        BUCKETS.forEach((le, b) =>
          lines.push(
            `${m.name}_bucket${fmt({ ...labels, le: String(le) })} ${Math.floor((n * (b + 1)) / BUCKETS.length)}`,
          ),
        );
        lines.push(
          `${m.name}_bucket${fmt({ ...labels, le: '+Inf' })} ${n}`,
          `${m.name}_sum${fmt(labels)} ${(n * 0.02).toFixed(3)}`,
          `${m.name}_count${fmt(labels)} ${n}`,
        );
      } else if (m.type === 'counter') {
        lines.push(`${m.name}${fmt(labels)} ${Math.floor(t * counterRate(m.name, scenario) * (1 + (i % 3)))}`);
      } else {
        lines.push(`${m.name}${fmt(labels)} ${gaugeValue(m.name, labels, i)}`);
      }
    });
  }
  return `${lines.join('\n')}\n`;
}

function counterRate(name: string, s: SyntheticScenario): number {
  const healthy = s.verdict === 'healthy';
  switch (name) {
    case METRICS.promptTokens.name:
      return 40_000;
    case METRICS.cachedTokens.name:
      return healthy ? 38_400 : 35_800;
    case METRICS.oracleCachedTokens.name:
      return 38_400;
    case METRICS.predictedRouterCachedTokens.name:
      return healthy ? 38_000 : 0;
    default:
      return 10;
  }
}

function gaugeValue(name: string, labels: Record<string, string>, i: number): number {
  switch (name) {
    case METRICS.up.name:
    case METRICS.buildInfo.name:
    case METRICS.configReloadSuccessful.name:
      return 1;
    case METRICS.configReloadTimestamp.name:
      return 1_780_000_000;
    default:
      return labels.server === undefined ? 1 : 100 + i;
  }
}

export interface SyntheticExporter {
  /** host:port */
  readonly address: string;
  close(): Promise<void>;
}

export async function startSyntheticExporter(scenario: SyntheticScenario): Promise<SyntheticExporter> {
  const started = Date.now();
  const server = createServer((req, res) => {
    if (req.url === '/metrics') {
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
      res.end(syntheticExposition(scenario, (Date.now() - started) / 1000));
    } else {
      res.writeHead(404).end();
    }
  });
  const port = await listen(server);
  return { address: `127.0.0.1:${port}`, close: () => closeServer(server) };
}
