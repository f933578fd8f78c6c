import { describe, expect, it } from 'vitest';
import { sample } from '../../../test/helpers/timeline-samples.js';
import { Timeline } from './timeline.js';

describe('Timeline', () => {
  it('samples when due, at most once per interval', () => {
    const tl = new Timeline({ maxSamples: 10, intervalMs: 1_000 });
    let snapshots = 0;
    const snap = (now: number) => () => {
      snapshots++;
      return { now } as never;
    };
    expect(tl.due(0)).toBe(true);
    tl.add(sample(0, 0));
    tl.offer(500, snap(500));
    expect(snapshots).toBe(0);
    expect(tl.due(1_000)).toBe(true);
  });

  it('stays within maxSamples over any run length, keeps the first and the newest sample, and doubles its interval', () => {
    const tl = new Timeline({ maxSamples: 16, intervalMs: 1_000 });
    let t = 0;
    let newest = 0;
    let newestRequests = 0;
    for (let i = 0; i < 10_000; i++) {
      t += 1_000;
      if (tl.due(t)) {
        tl.add(sample(t, i));
        newest = t;
        newestRequests = i;
      }
      expect(tl.samples.length).toBeLessThanOrEqual(16);
    }
    expect(tl.samples[0]!.t).toBe(1_000);
    expect(tl.samples.at(-1)!.t).toBe(newest);
    expect(tl.intervalMs).toBeGreaterThanOrEqual(512_000);
    // the samples still cover the run evenly: no step larger than twice the final interval
    const steps = tl.samples.slice(1).map((s, i) => s.t - tl.samples[i]!.t);
    expect(Math.max(...steps)).toBeLessThanOrEqual(2 * tl.intervalMs);
    // cumulative counters: dropping samples loses no count between the first and the last
    expect(tl.samples.at(-1)!.requests - tl.samples[0]!.requests).toBe(newestRequests);
  });

  it('ignores a sample older than the newest and replaces one at the same time', () => {
    const tl = new Timeline({ maxSamples: 8, intervalMs: 1_000 });
    tl.add(sample(5_000, 5));
    tl.add(sample(4_000, 4));
    tl.add(sample(5_000, 6));
    expect(tl.samples.map((s) => s.requests)).toEqual([6]);
  });

  it('rejects a bound that cannot halve', () => {
    expect(() => new Timeline({ maxSamples: 2 })).toThrow(/maxSamples/);
  });
});
