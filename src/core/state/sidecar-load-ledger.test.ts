import { describe, expect, it } from 'vitest';
import { SIDECAR_LAG_LIMITS, SidecarLoadLedger } from './sidecar-load-ledger.js';

const load = (ts: number, eventLoopDelayMs: number, utilization = 0.2) =>
  ({ kind: 'sidecar-load', ts, intervalMs: 1_000, eventLoopDelayMs, utilization }) as const;

describe('SidecarLoadLedger', () => {
  it('attributes a gap near a lagging interval to the sidecar, even when the gap is applied first', () => {
    const l = new SidecarLoadLedger();
    l.load(load(1_000, 2));
    // the stalled loop runs again: the queued batches (and their gap) are applied before the interval's report
    l.gap(10_500, 'ctx0', 40);
    l.load(load(11_000, 1_400, 1));
    l.gap(11_000 + SIDECAR_LAG_LIMITS.graceAfterMs - 1, 'ctx1', 3);
    l.gap(11_000 + SIDECAR_LAG_LIMITS.graceAfterMs + 1, 'ctx1', 5);
    const s = l.summary(null);
    expect(s.intervals).toBe(1);
    expect(s.laggingMs).toBe(1_000);
    expect(s.worstEventLoopDelayMs).toBe(1_400);
    expect(s.laggingNow).toBe(true);
    expect(Object.fromEntries(s.byServer)).toEqual({ ctx0: { gaps: 1, missed: 40 }, ctx1: { gaps: 1, missed: 3 } });
  });

  it('explains nothing without a lag, and nothing before the window', () => {
    const l = new SidecarLoadLedger();
    l.gap(500, 'ctx0', 4);
    l.load(load(1_000, SIDECAR_LAG_LIMITS.eventLoopDelayMs - 1, 1));
    expect(l.summary(null)).toMatchObject({ intervals: 0, laggingNow: false });
    expect(l.summary(null).byServer.size).toBe(0);
    l.load(load(2_000, SIDECAR_LAG_LIMITS.eventLoopDelayMs));
    expect(l.summary(null).byServer.get('ctx0')).toEqual({ gaps: 1, missed: 4 });
    expect(l.summary(3_000).intervals).toBe(0);
    l.load(load(3_000, 10));
    expect(l.summary(null).laggingNow).toBe(false);
  });

  it("takes a gap that showed while a subscriber's own queue was backlogged, with no late loop at all", () => {
    const l = new SidecarLoadLedger();
    l.load(load(1_000, 3, 1));
    l.gap(1_500, 'ctx0', 7, 2_400);
    l.gap(1_600, 'ctx1', 2, null);
    const s = l.summary(null);
    expect(s).toMatchObject({ intervals: 0, worstBacklogMs: 2_400, laggingNow: false });
    expect(Object.fromEntries(s.byServer)).toEqual({ ctx0: { gaps: 1, missed: 7 } });
    // behind now while such a loss is recent: the findings that need every event wait
    expect(l.summary(null, 1_500 + SIDECAR_LAG_LIMITS.graceAfterMs).laggingNow).toBe(true);
    expect(l.summary(null, 1_501 + SIDECAR_LAG_LIMITS.graceAfterMs).laggingNow).toBe(false);
    // before the window: neither counted nor the worst
    expect(l.summary(2_000)).toMatchObject({ worstBacklogMs: 0 });
    expect(l.summary(2_000).byServer.size).toBe(0);
  });
});
