import { describe, expect, it } from 'vitest';
import { serverStats, snapshotFixture } from '../../../test/helpers/snapshot-fixture.js';
import { counterMark, steadyStateStats } from './steady-window.js';

describe('steady-state window', () => {
  // a cold start: 1 000 requests at 70 % hit, then 2 000 more at 90 %
  const warm = snapshotFixture({
    now: 40_000,
    requests: 1_000,
    servers: [
      serverStats('ctx0', { requests: 600, promptTokens: 600_000, cachedTokens: 420_000 }),
      serverStats('ctx1', { requests: 400, promptTokens: 400_000, cachedTokens: 280_000 }),
    ],
    decisions: { ...snapshotFixture().decisions, followupTurns: 900, stickyTurns: 300 },
  });
  const end = snapshotFixture({
    now: 100_000,
    requests: 3_000,
    servers: [
      serverStats('ctx0', { requests: 1_800, promptTokens: 3_600_000, cachedTokens: 3_120_000 }),
      serverStats('ctx1', { requests: 1_200, promptTokens: 2_400_000, cachedTokens: 2_080_000 }),
    ],
    decisions: { ...snapshotFixture().decisions, followupTurns: 2_850, stickyTurns: 1_080 },
  });

  it("counts only what follows the warm-up: its hit ratio is the window's, not the cold start's", () => {
    const stats = steadyStateStats({ targetRequests: 1_000, startedAt: 2_000 }, counterMark(warm), counterMark(end));
    expect(stats).toEqual({
      warmup_target_requests: 1_000,
      warmup_requests: 1_000,
      warmup_seconds: 38,
      requests: 2_000,
      seconds: 60,
      // (5 200 000 − 700 000) / (6 000 000 − 1 000 000), where the run since start reads 86.7 %
      cache_hit_ratio: 0.9,
      stickiness: 0.4,
    });
  });

  it('has no ratio for an empty window, and refuses one that ends before its warm-up', () => {
    const empty = steadyStateStats({ targetRequests: 1_000, startedAt: 0 }, counterMark(warm), counterMark(warm));
    expect(empty.requests).toBe(0);
    expect(empty.cache_hit_ratio).toBeNull();
    expect(empty.stickiness).toBeNull();
    expect(() =>
      steadyStateStats({ targetRequests: 1_000, startedAt: 0 }, counterMark(end), counterMark(warm)),
    ).toThrow(RangeError);
  });
});
