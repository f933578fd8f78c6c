import { describe, expect, it } from 'vitest';
import { binsOf, eventsChart, hitRatioChart, reportCharts, stickinessChart } from './report-charts.js';
import { sample } from '../../../test/helpers/timeline-samples.js';
import type { TimelineSample } from './timeline.js';

function twoServers(
  t: number,
  a: { req: number; sticky: number; fu: number; p: number; c: number; o: number },
  b: { req: number },
  ranks: { events: number; gaps: number; resets: number },
): TimelineSample {
  const base = sample(t, 0);
  return {
    ...base,
    followups: a.fu,
    sticky: a.sticky,
    servers: [
      {
        server: 'ctx0',
        requests: a.req,
        promptTokens: a.p,
        cachedTokens: a.c,
        oracleCachedTokens: a.o,
        predictedRouterCachedTokens: 0,
        ranks: [{ rank: 0, ...ranks }],
      },
      {
        server: 'ctx1',
        requests: b.req,
        promptTokens: 0,
        cachedTokens: 0,
        oracleCachedTokens: 0,
        predictedRouterCachedTokens: 0,
        ranks: [],
      },
    ],
  };
}

describe('report charts', () => {
  it('groups samples into at most maxBins intervals that cover the whole run', () => {
    const samples = Array.from({ length: 101 }, (_, i) => sample(i * 1_000, i));
    const bins = binsOf(samples, 40);
    expect(bins.length).toBeLessThanOrEqual(40);
    expect(bins[0]!.from.t).toBe(0);
    expect(bins.at(-1)!.to.t).toBe(100_000);
    expect(binsOf([sample(0, 0)])).toEqual([]);
  });

  it('ratios are per interval, and unknown (null) where the interval has no denominator', () => {
    const s = [
      twoServers(0, { req: 0, sticky: 0, fu: 0, p: 0, c: 0, o: 0 }, { req: 0 }, { events: 0, gaps: 0, resets: 0 }),
      twoServers(
        1_000,
        { req: 10, sticky: 2, fu: 8, p: 1_000, c: 500, o: 900 },
        { req: 10 },
        { events: 10, gaps: 0, resets: 0 },
      ),
      twoServers(
        2_000,
        { req: 10, sticky: 2, fu: 8, p: 1_000, c: 500, o: 900 },
        { req: 30 },
        { events: 10, gaps: 1, resets: 1 },
      ),
    ];
    const bins = binsOf(s);
    const hit = hitRatioChart(s, bins);
    // one line per server and one oracle line for all servers: no realised/oracle pair per server
    expect(hit.series.map((x) => x.label)).toEqual(['ctx0', 'ctx1', 'oracle, all servers']);
    const ctx0 = hit.series.find((x) => x.label === 'ctx0')!;
    expect(ctx0.points.map((p) => p.v)).toEqual([0.5, null]);
    expect(hit.series.find((x) => x.label === 'oracle, all servers')!.points.map((p) => p.v)).toEqual([0.9, null]);
    const sticky = stickinessChart(bins);
    expect(sticky.series[0]!.points.map((p) => p.v)).toEqual([0.25, null]);
    // chance: Σ share² of the interval's requests — 10/10 split = 0.5; then only ctx1 took requests = 1
    expect(sticky.series[1]!.points.map((p) => p.v)).toEqual([0.5, 1]);
    const events = eventsChart(s, bins);
    // one line per server (its ranks summed); the gap and the reset are marked with their rank
    expect(events.series.map((x) => x.label)).toEqual(['ctx0', 'ctx1']);
    expect(events.series[0]!.points.map((p) => p.v)).toEqual([10, 0]);
    expect(events.markers.map((m) => m.label)).toEqual([
      'ctx0 rank 0: 1 event_id gap',
      'ctx0 rank 0: event stream reset',
    ]);
    expect(events.note).toBeNull();
    expect(events.markers.map((m) => [m.t, m.kind])).toEqual([
      [2_000, 'gap'],
      [2_000, 'reset'],
    ]);
  });

  it('every chart of the report, each with one point per interval', () => {
    const samples = Array.from({ length: 11 }, (_, i) => sample(i * 1_000, i * 5));
    const charts = reportCharts(samples);
    expect(charts.map((c) => c.id)).toEqual([
      'hit-ratio',
      'stickiness',
      'decisions',
      'predicted-tokens',
      'kv-events',
      'score-terms',
    ]);
    // a thin run is cut into fewer intervals (about 12 requests per server each, at least 6 asked: 10 samples in
    // strides of 2 give 5)
    for (const c of charts) for (const s of c.series) expect(s.points).toHaveLength(5);
    const long = Array.from({ length: 101 }, (_, i) => sample(i * 1_000, i * 50));
    for (const c of reportCharts(long)) for (const s of c.series) expect(s.points).toHaveLength(34);
  });

  it('a plot that shows nothing worth reading says why in a sentence', () => {
    // events off (the seed): every server's KV events are 0, no decision has worker truth
    const off = Array.from({ length: 11 }, (_, i) => {
      const base = sample(i * 1_000, i * 30);
      return {
        ...base,
        oracleBest: 0,
        notOracleBest: 0,
        noPrefix: i * 30,
        servers: base.servers.map((s) => ({ ...s, predictedRouterCachedTokens: 0, ranks: [] })),
      };
    });
    const byId = new Map(reportCharts(off).map((c) => [c.id, c]));
    expect(byId.get('kv-events')!.note).toMatch(/^No KV event came from any worker over this window/);
    expect(byId.get('decisions')!.note).toMatch(/^No decision could be judged against the oracle/);
    expect(byId.get('predicted-tokens')!.note).toMatch(/predicted matches stay at 0/);
    expect(byId.get('hit-ratio')!.note).toBeNull();
  });
});
