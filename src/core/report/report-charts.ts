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
  /**
   * What the plot shows when it shows nothing worth reading, one sentence: why it is empty, or why every value is
   * 0 (the seed's KV events); null when the lines speak for themselves. Never an empty frame without it.
   */
  readonly note: string | null;
}

interface Bin {
  readonly from: TimelineSample;
  readonly to: TimelineSample;
}

export const DEFAULT_MAX_BINS = 40;
/** requests per server an interval should hold on average, so a per-server ratio is rarely a gap */
const REQUESTS_PER_SERVER_BIN = 12;
const MIN_BINS = 6;

/** At most `maxBins` intervals, fewer when the run is thin: about 12 requests per server and interval. */
export function binCount(samples: readonly TimelineSample[], maxBins = DEFAULT_MAX_BINS): number {
  const last = samples.at(-1);
  const first = samples[0];
  if (last === undefined || first === undefined) return maxBins;
  const servers = Math.max(1, last.servers.length);
  const requests = last.requests - first.requests;
  return Math.max(MIN_BINS, Math.min(maxBins, Math.floor(requests / (servers * REQUESTS_PER_SERVER_BIN))));
}

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
  // one line per server (what it served from cache), one for the oracle of all servers together: the gap between
  // them is the story; eight tangled realised/oracle pairs were not
  const series = [
    ...servers.map((server, i) =>
      line(server, i, bins, (b) =>
        ratio(
          serverDelta(b, server, (s) => s.cachedTokens),
          serverDelta(b, server, (s) => s.promptTokens),
        ),
      ),
    ),
    line(
      'oracle, all servers',
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
  return {
    id: 'hit-ratio',
    title: 'Prefix-cache hit ratio per server, against the oracle',
    caption:
      "One line per server: cached / prompt tokens it reported per interval. Dashed: the oracle of all servers, what the best choice could have served from cache (worker truth from KV events, else each follow-up turn on its previous server). A healthy router keeps the servers' lines up at the dashed one.",
    unit: 'ratio',
    kind: 'line',
    series,
    markers: [],
    note: series.every((x) => x.points.every((p) => p.v === null))
      ? 'No request finished with its usage (cached tokens) over this window yet.'
      : null,
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
        'chance (Σ share²)',
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
    note:
      bins.length > 0 && bins.every((b) => b.to.followups === b.from.followups)
        ? 'No follow-up turn recognised over this window: requests carry no trajectory id (X-Correlation-ID), so stickiness cannot be measured.'
        : null,
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
    note:
      bins.length > 0 &&
      bins.every((b) => b.to.oracleBest === b.from.oracleBest && b.to.notOracleBest === b.from.notOracleBest)
        ? 'No decision could be judged against the oracle: without KV events (worker truth) kvsentinel does not know which server held a prefix, so every decision is grey.'
        : null,
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
    note:
      bins.length > 0 &&
      bins.every((b) => sum(b, (s) => s.predictedRouterCachedTokens) === 0) &&
      bins.some((b) => sum(b, (s) => s.cachedTokens) > 0)
        ? "The router's predicted matches stay at 0 while the servers cache tokens: its table matches nothing, it routes blind."
        : null,
  };
}

export function eventsChart(samples: readonly TimelineSample[], bins: readonly Bin[]): ChartData {
  const servers = serversOf(samples);
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
  for (const server of servers) {
    const ranks = new Set<number>();
    for (const s of samples) for (const r of serverIn(s, server)?.ranks ?? []) ranks.add(r.rank);
    for (const rank of [...ranks].sort((a, b) => a - b)) {
      for (const b of bins) {
        const gaps = rankValue(b.to, server, rank, (r) => r.gaps) - rankValue(b.from, server, rank, (r) => r.gaps);
        const resets =
          rankValue(b.to, server, rank, (r) => r.resets) - rankValue(b.from, server, rank, (r) => r.resets);
        if (gaps > 0)
          markers.push({
            t: b.to.t,
            kind: 'gap',
            label: `${server} rank ${rank}: ${gaps} event_id gap${gaps > 1 ? 's' : ''}`,
          });
        if (resets > 0) markers.push({ t: b.to.t, kind: 'reset', label: `${server} rank ${rank}: event stream reset` });
      }
    }
  }
  // one line per server, its attention-DP ranks summed (a rank's gaps and resets are marked and named)
  const series = servers.map((server, i) =>
    line(server, i, bins, (b) => serverDelta(b, server, (v) => v.ranks.reduce((n, r) => n + r.events, 0)) / seconds(b)),
  );
  const none = series.every((x) => x.points.every((p) => p.v === null || p.v === 0));
  return {
    id: 'kv-events',
    title: 'KV events per server',
    caption:
      "Events per second from each worker (its /kv_cache_events drains or its ZMQ stream; attention-DP ranks summed). Markers: event_id gaps (events someone else consumed or the worker dropped) and stream resets (worker restarts), named per rank. A flat 0 means the router's table gets nothing from the workers.",
    unit: 'per-second',
    kind: 'line',
    series,
    markers,
    note:
      servers.length > 0 && none
        ? 'No KV event came from any worker over this window: the lines sit at 0 because the pull path returned [] every time (see events-absent), so the router cannot fill its table from events.'
        : null,
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
    note:
      bins.length === 0
        ? null
        : bins.every((b) => b.to.scoreTerms.withKeys === b.from.scoreTerms.withKeys)
          ? "No decision carried a hashed prompt over this window, so the router's cache term cannot be computed (the requests' token ids, or --tokenizer, give it)."
          : bins.every((b) => b.to.scoreTerms.bestCacheTerm === b.from.scoreTerms.bestCacheTerm)
            ? "The cache term is 0 for every server throughout: the router's table matches none of the prompts, so only the load term decides."
            : null,
  };
}

/** Every chart of the report, in reading order. */
export function reportCharts(samples: readonly TimelineSample[], maxBins = DEFAULT_MAX_BINS): ChartData[] {
  const bins = binsOf(samples, binCount(samples, maxBins));
  return [
    hitRatioChart(samples, bins),
    stickinessChart(bins),
    decisionsChart(bins),
    predictedTokensChart(samples, bins),
    eventsChart(samples, bins),
    scoreTermsChart(bins),
  ];
}
