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
    const ctx0 = hit.series.find((x) => x.label === 'ctx0 realised')!;
    expect(ctx0.points.map((p) => p.v)).toEqual([0.5, null]);
    expect(hit.series.find((x) => x.label === 'ctx0 oracle')!.points.map((p) => p.v)).toEqual([0.9, null]);
    const sticky = stickinessChart(bins);
    expect(sticky.series[0]!.points.map((p) => p.v)).toEqual([0.25, null]);
    // chance: Σ share² of the interval's requests — 10/10 split = 0.5; then only ctx1 took requests = 1
    expect(sticky.series[1]!.points.map((p) => p.v)).toEqual([0.5, 1]);
    const events = eventsChart(s, bins);
    expect(events.series.map((x) => x.label)).toEqual(['ctx0 rank 0', 'ctx1 (no events)']);
    expect(events.series[0]!.points.map((p) => p.v)).toEqual([10, 0]);
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
    for (const c of charts) for (const s of c.series) expect(s.points).toHaveLength(10);
  });
});
