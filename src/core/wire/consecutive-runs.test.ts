import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { consecutiveRuns } from './consecutive-runs.js';

describe('consecutiveRuns', () => {
  it("splits at every skipped position and keeps each run's start", () => {
    const items = [0, 1, 3, 4, 5, 7].map((index) => ({ event: `e${index}`, index }));
    expect(consecutiveRuns(items)).toEqual([
      { start: 0, events: ['e0', 'e1'] },
      { start: 3, events: ['e3', 'e4', 'e5'] },
      { start: 7, events: ['e7'] },
    ]);
    expect(consecutiveRuns([])).toEqual([]);
  });

  it('every item lands once, at start + offset = its index', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.nat(200)), (positions) => {
        const sorted = [...positions].sort((a, b) => a - b);
        const runs = consecutiveRuns(sorted.map((index) => ({ event: index, index })));
        expect(runs.flatMap((r) => r.events.map((e, i) => [e, r.start + i]))).toEqual(sorted.map((i) => [i, i]));
        for (let k = 1; k < runs.length; k++)
          expect(runs[k]!.start).toBeGreaterThan(runs[k - 1]!.start + runs[k - 1]!.events.length);
      }),
    );
  });
});
