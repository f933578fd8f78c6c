// The report's plots as data: per-interval series derived from the timeline's cumulative samples. Consecutive
// samples are grouped into at most `maxBins` intervals so a ratio rests on enough requests to mean something; a
// ratio over an interval without its denominator is null (a gap in the line, never a made-up 0).
import type { TimelineSample } from './timeline.js';

export interface ChartPoint {
  /** end of the interval, ms */
  readonly t: number;
  readonly v: number | null;
}

export interface ChartSeries {
  readonly label: string;
  readonly points: readonly ChartPoint[];
  /** same group = same colour (a server's realised and oracle lines) */
  readonly group: number;
  /** line style within a group: 0 solid, 1 dashed, 2 dotted, 3 dash-dot (e.g. attention-DP ranks of one server) */
  readonly dash: number;
}

export interface ChartMarker {
  readonly t: number;
  readonly kind: 'gap' | 'reset';
  readonly label: string;
}

export interface ChartData {
  readonly id: string;
  readonly title: string;
  /** what to read in it, one sentence */
  readonly caption: string;
  readonly unit: 'ratio' | 'count' | 'per-second' | 'term';
  /** lines, or stacked bars per interval */
  readonly kind: 'line' | 'stacked';
  readonly series: readonly ChartSeries[];
  readonly markers: readonly ChartMarker[];
}

interface Bin {
  readonly from: TimelineSample;
  readonly to: TimelineSample;
}

export const DEFAULT_MAX_BINS = 40;

export function binsOf(samples: readonly TimelineSample[], maxBins = DEFAULT_MAX_BINS): Bin[] {
  if (samples.length < 2) return [];
  const stride = Math.max(1, Math.ceil((samples.length - 1) / maxBins));
  const bins: Bin[] = [];
  for (let i = 0; i < samples.length - 1; i += stride)
    bins.push({ from: samples[i]!, to: samples[Math.min(i + stride, samples.length - 1)]! });
  return bins;
}

function ratio(num: number, den: number): number | null {
  return den > 0 ? num / den : null;
}

function seconds(b: Bin): number {
  return Math.max(0.001, (b.to.t - b.from.t) / 1000);
}

type ServerSampleOf = TimelineSample['servers'][number];

function serverIn(sample: TimelineSample, server: string): ServerSampleOf | undefined {
  return sample.servers.find((s) => s.server === server);
}

/** Δ of a per-server counter over a bin (a server first seen inside the bin counts from 0). */
function serverDelta(b: Bin, server: string, pick: (s: ServerSampleOf) => number): number {
  const to = serverIn(b.to, server);
  if (to === undefined) return 0;
  const from = serverIn(b.from, server);
  return pick(to) - (from === undefined ? 0 : pick(from));
}

function serversOf(samples: readonly TimelineSample[]): string[] {
  const seen = new Set<string>();
  for (const s of samples) for (const v of s.servers) seen.add(v.server);
  return [...seen].sort();
}

function line(
  label: string,
  group: number,
  bins: readonly Bin[],
  value: (b: Bin) => number | null,
  dash = 0,
): ChartSeries {
  return { label, group, dash, points: bins.map((b) => ({ t: b.to.t, v: value(b) })) };
}

/** the series group of all servers together (drawn apart from the per-server colours) */
export const TOTAL_GROUP = -1;

export function hitRatioChart(samples: readonly TimelineSample[], bins: readonly Bin[]): ChartData {
  const servers = serversOf(samples);
  const sum = (b: Bin, pick: (s: ServerSampleOf) => number): number =>
    servers.reduce((n, s) => n + serverDelta(b, s, pick), 0);
  const total = [
    line('all servers realised', TOTAL_GROUP, bins, (b) =>
      ratio(
        sum(b, (s) => s.cachedTokens),
        sum(b, (s) => s.promptTokens),
      ),
    ),
    line(
      'all servers oracle',
      TOTAL_GROUP,
      bins,
      (b) =>
        ratio(
          sum(b, (s) => s.oracleCachedTokens),
          sum(b, (s) => s.promptTokens),
        ),
      1,
    ),
  ];
  const series = servers.flatMap((server, i) => [
    line(`${server} realised`, i, bins, (b) =>
      ratio(
        serverDelta(b, server, (s) => s.cachedTokens),
        serverDelta(b, server, (s) => s.promptTokens),
      ),
    ),
    line(
      `${server} oracle`,
      i,
      bins,
      (b) =>
        ratio(
          serverDelta(b, server, (s) => s.oracleCachedTokens),
          serverDelta(b, server, (s) => s.promptTokens),
        ),
      1,
    ),
  ]);
  return {
    id: 'hit-ratio',
    title: 'Prefix-cache hit ratio per server: realised vs oracle',
    caption:
      'Solid: cached / prompt tokens the servers reported. Dashed: what the best choice could have served from cache (worker truth from KV events, else each follow-up turn on its previous server). Thick: all servers. A healthy router keeps solid and dashed together.',
    unit: 'ratio',
    kind: 'line',
    series: [...total, ...series],
    markers: [],
  };
}

export function stickinessChart(bins: readonly Bin[]): ChartData {
  return {
    id: 'stickiness',
    title: 'Stickiness vs chance',
    caption:
      "Share of follow-up turns sent back to their previous turn's server, against the share chance gives with the servers' load shares (Σ share²). At chance, routing ignores where the conversation's prefix is cached.",
    unit: 'ratio',
    kind: 'line',
    series: [
      line('stickiness', 0, bins, (b) => ratio(b.to.sticky - b.from.sticky, b.to.followups - b.from.followups)),
      line(
        'chance',
        1,
        bins,
        (b) => {
          const servers = new Set([...b.to.servers.map((s) => s.server)]);
          const deltas = [...servers].map((s) => serverDelta(b, s, (v) => v.requests));
          const total = deltas.reduce((a, d) => a + d, 0);
          return total > 0 ? deltas.reduce((a, d) => a + (d / total) ** 2, 0) : null;
        },
        1,
      ),
    ],
    markers: [],
  };
}

export function decisionsChart(bins: readonly Bin[]): ChartData {
  return {
    id: 'decisions',
    title: 'Routing decisions: chosen server was / was not the oracle best',
    caption:
      'Per interval. Oracle best: the chosen server held the longest cached prefix (worker truth from KV events). Without KV events no server is known to hold a prefix.',
    unit: 'count',
    kind: 'stacked',
    series: [
      line('oracle best', 2, bins, (b) => b.to.oracleBest - b.from.oracleBest),
      line('not oracle best', 3, bins, (b) => b.to.notOracleBest - b.from.notOracleBest),
      line('no prefix held / no worker truth', 7, bins, (b) => b.to.noPrefix - b.from.noPrefix),
    ],
    markers: [],
  };
}

export function predictedTokensChart(samples: readonly TimelineSample[], bins: readonly Bin[]): ChartData {
  const servers = serversOf(samples);
  const sum = (b: Bin, pick: (s: ServerSampleOf) => number): number =>
    servers.reduce((n, s) => n + serverDelta(b, s, pick), 0);
  return {
    id: 'predicted-tokens',
    title: "Router's predicted matches vs realised cached tokens",
    caption:
      "Prompt tokens per second: what the router's table (kvsentinel's replica of it) matched on the chosen server, what the servers reported cached, and the oracle. Predicted ≈ 0 while tokens are cached means the router routes blind.",
    unit: 'per-second',
    kind: 'line',
    series: [
      line('router predicted', 0, bins, (b) => sum(b, (s) => s.predictedRouterCachedTokens) / seconds(b)),
      line('realised cached', 1, bins, (b) => sum(b, (s) => s.cachedTokens) / seconds(b)),
      line('oracle', 2, bins, (b) => sum(b, (s) => s.oracleCachedTokens) / seconds(b), 1),
    ],
    markers: [],
  };
}

export function eventsChart(samples: readonly TimelineSample[], bins: readonly Bin[]): ChartData {
  const streams: { server: string; rank: number; group: number; dash: number }[] = [];
  serversOf(samples).forEach((server, group) => {
    const ranks = new Set<number>();
    for (const s of samples) for (const r of serverIn(s, server)?.ranks ?? []) ranks.add(r.rank);
    if (ranks.size === 0) streams.push({ server, rank: -1, group, dash: 0 });
    [...ranks].sort((a, b) => a - b).forEach((rank, i) => streams.push({ server, rank, group, dash: i % 4 }));
  });
  const rankValue = (
    s: TimelineSample,
    server: string,
    rank: number,
    pick: (r: { events: number; gaps: number; resets: number }) => number,
  ): number => {
    const r = serverIn(s, server)?.ranks.find((x) => x.rank === rank);
    return r === undefined ? 0 : pick(r);
  };
  const markers: ChartMarker[] = [];
  for (const { server, rank } of streams) {
    if (rank < 0) continue;
    for (const b of bins) {
      const gaps = rankValue(b.to, server, rank, (r) => r.gaps) - rankValue(b.from, server, rank, (r) => r.gaps);
      const resets = rankValue(b.to, server, rank, (r) => r.resets) - rankValue(b.from, server, rank, (r) => r.resets);
      if (gaps > 0)
        markers.push({
          t: b.to.t,
          kind: 'gap',
          label: `${server} rank ${rank}: ${gaps} event_id gap${gaps > 1 ? 's' : ''}`,
        });
      if (resets > 0) markers.push({ t: b.to.t, kind: 'reset', label: `${server} rank ${rank}: event stream reset` });
    }
  }
  return {
    id: 'kv-events',
    title: 'KV events per server and attention-DP rank',
    caption:
      "Events per second drained from each worker's /kv_cache_events (gaps: events someone else consumed or the worker dropped; resets: worker restarts). A flat 0 means the router has no cache signal.",
    unit: 'per-second',
    kind: 'line',
    series: streams.map(({ server, rank, group, dash }) =>
      line(
        rank < 0 ? `${server} (no events)` : `${server} rank ${rank}`,
        group,
        bins,
        (b) =>
          rank < 0
            ? 0
            : (rankValue(b.to, server, rank, (r) => r.events) - rankValue(b.from, server, rank, (r) => r.events)) /
              seconds(b),
        dash,
      ),
    ),
    markers,
  };
}

export function scoreTermsChart(bins: readonly Bin[]): ChartData {
  const mean = (b: Bin, sum: (s: TimelineSample) => number, count: (s: TimelineSample) => number): number | null =>
    ratio(sum(b.to) - sum(b.from), count(b.to) - count(b.from));
  return {
    id: 'score-terms',
    title: "Load term vs cache term of the router's score",
    caption:
      'Means per decision (score = matched / prompt blocks − in-flight / max_batch_size). When the best cache term stays under the load spread, load alone decides where requests go.',
    unit: 'term',
    kind: 'line',
    series: [
      line('cache term, chosen server', 0, bins, (b) =>
        mean(
          b,
          (s) => s.scoreTerms.chosenCacheTerm,
          (s) => s.scoreTerms.withKeys,
        ),
      ),
      line(
        'cache term, best server',
        2,
        bins,
        (b) =>
          mean(
            b,
            (s) => s.scoreTerms.bestCacheTerm,
            (s) => s.scoreTerms.withKeys,
          ),
        1,
      ),
      line('load spread (busiest − idlest)', 3, bins, (b) =>
        mean(
          b,
          (s) => s.scoreTerms.loadSpread,
          (s) => s.scoreTerms.withLoad,
        ),
      ),
    ],
    markers: [],
  };
}

/** Every chart of the report, in reading order. */
export function reportCharts(samples: readonly TimelineSample[], maxBins = DEFAULT_MAX_BINS): ChartData[] {
  const bins = binsOf(samples, maxBins);
  return [
    hitRatioChart(samples, bins),
    stickinessChart(bins),
    decisionsChart(bins),
    predictedTokensChart(samples, bins),
    eventsChart(samples, bins),
    scoreTermsChart(bins),
  ];
}
