import { describe, expect, it } from 'vitest';
import { KvsentinelError } from '../errors.js';
import { serverStats, snapshotFixture } from '../../../test/helpers/snapshot-fixture.js';
import { counterMark, steadyStateStats } from './steady-window.js';

describe('steady-state window', () => {
  /** a server's requests, prompt tokens and cached tokens */
  type Served = readonly [requests: number, promptTokens: number, cachedTokens: number];
  /** the counters at `now` of ctx0 and ctx1, with the follow-up and sticky turns so far */
  function countersAt(now: number, ctx0: Served, ctx1: Served, followupTurns: number, stickyTurns: number) {
    const server = (id: string, [requests, promptTokens, cachedTokens]: Served) =>
      serverStats(id, { requests, promptTokens, cachedTokens });
    return snapshotFixture({
      now,
      requests: ctx0[0] + ctx1[0],
      servers: [server('ctx0', ctx0), server('ctx1', ctx1)],
      decisions: { ...snapshotFixture().decisions, followupTurns, stickyTurns },
    });
  }
  // a cold start: 1 000 requests at 70 % hit, then 2 000 more at 90 %
  const warm = countersAt(40_000, [600, 600_000, 420_000], [400, 400_000, 280_000], 900, 300);
  const end = countersAt(100_000, [1_800, 3_600_000, 3_120_000], [1_200, 2_400_000, 2_080_000], 2_850, 1_080);

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
    ).toThrow(KvsentinelError);
  });
});
