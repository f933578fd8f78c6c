// The sidecar's own lag, and which event gaps it explains. A ZMQ socket past its high-water mark, a drain or a replay
// that timed out while kvsentinel's event loop ran late: those gaps are the sidecar's loss, not a consumer draining the
// worker's queue or a publisher dropping batches. The ledger keeps the intervals the sidecar lagged (sidecar-load
// observations) and the gaps seen (worker-events reducer); a gap near a lagging interval is the sidecar's. Attribution
// is read at projection time, not at apply time, because a gap can be applied before the load report of the
// interval it fell in (a stalled loop reports its stall once it runs again).
import type { SidecarLoadObservation } from '../observe/observation.js';

/** when an interval counts as lagging */
export const SIDECAR_LAG_LIMITS = {
  /**
   * the event loop's p99 delay over the interval; a loop that is busy but answers on time keeps up (the demo's
   * simulator keeps it 100% busy at 50 ms), so utilisation alone never counts
   */
  eventLoopDelayMs: 250,
  /** a gap this long before a lagging interval starts is the sidecar's (its socket filled while the loop ran late) */
  graceBeforeMs: 2_000,
  /**
   * …and this long after it ends (a replay abandoned after its 5-s timeout, the queue read after the stall); a
   * subscriber's backlog that lost batches this recently still counts as the sidecar behind now
   */
  graceAfterMs: 10_000,
} as const;

/** intervals and gaps kept; older ones fall out (a window holds far fewer in any run that is not lagging) */
const MAX_ENTRIES = 4_096;

interface LagInterval {
  readonly from: number;
  readonly to: number;
  readonly eventLoopDelayMs: number;
  readonly utilization: number;
}

interface Gap {
  readonly ts: number;
  readonly server: string;
  readonly missing: number;
  /** the subscriber's own socket held a backlog this long when the gap showed: its loss whatever the loop did */
  readonly behindMs: number | null;
}

export interface SidecarGaps {
  readonly gaps: number;
  readonly missed: number;
}

export interface SidecarLagSummary {
  /** lagging intervals in the window and their total length, ms */
  readonly intervals: number;
  readonly laggingMs: number;
  readonly worstEventLoopDelayMs: number;
  readonly worstUtilization: number;
  /** the last load report was a lagging one, or a subscriber's backlog lost batches within graceAfterMs of now */
  readonly laggingNow: boolean;
  /** the newest lagging interval's end, or null */
  readonly lastLagEnd: number | null;
  /** the longest backlog a ZMQ subscriber held when a gap showed (0: none in the window) */
  readonly worstBacklogMs: number;
  /** gaps (and events or batches they lost) the lag or a subscriber's backlog explains, by server */
  readonly byServer: ReadonlyMap<string, SidecarGaps>;
}

function isLagging(o: SidecarLoadObservation): boolean {
  return o.eventLoopDelayMs >= SIDECAR_LAG_LIMITS.eventLoopDelayMs;
}

export class SidecarLoadLedger {
  readonly #lags: LagInterval[] = [];
  readonly #gaps: Gap[] = [];
  #laggingNow = false;

  load(o: SidecarLoadObservation): void {
    this.#laggingNow = isLagging(o);
    if (!this.#laggingNow) return;
    this.#lags.push({
      from: o.ts - o.intervalMs,
      to: o.ts,
      eventLoopDelayMs: o.eventLoopDelayMs,
      utilization: o.utilization,
    });
    if (this.#lags.length > MAX_ENTRIES) this.#lags.shift();
  }

  gap(ts: number, server: string, missing: number, behindMs: number | null = null): void {
    this.#gaps.push({ ts, server, missing, behindMs });
    if (this.#gaps.length > MAX_ENTRIES) this.#gaps.shift();
  }

  /** whether the sidecar lagged near `ts` */
  #explains(ts: number): boolean {
    const g = SIDECAR_LAG_LIMITS;
    return this.#lags.some((l) => ts >= l.from - g.graceBeforeMs && ts <= l.to + g.graceAfterMs);
  }

  /**
   * the lag since `since` (the rules' window start; null: since the start) and the gaps it explains; `now`: when it
   * is read (a backlog that lost batches a moment ago is a sidecar behind now)
   */
  summary(since: number | null, now: number | null = null): SidecarLagSummary {
    const from = since ?? Number.NEGATIVE_INFINITY;
    const lags = this.#lags.filter((l) => l.to >= from);
    const byServer = new Map<string, SidecarGaps>();
    let worstBacklogMs = 0;
    let backlogNow = false;
    for (const g of this.#gaps) {
      if (g.ts < from) continue;
      if (g.behindMs !== null) {
        worstBacklogMs = Math.max(worstBacklogMs, g.behindMs);
        if (now !== null && now - g.ts <= SIDECAR_LAG_LIMITS.graceAfterMs) backlogNow = true;
      } else if (lags.length === 0 || !this.#explains(g.ts)) continue;
      const s = byServer.get(g.server) ?? { gaps: 0, missed: 0 };
      byServer.set(g.server, { gaps: s.gaps + 1, missed: s.missed + g.missing });
    }
    return {
      intervals: lags.length,
      laggingMs: lags.reduce((n, l) => n + (l.to - Math.max(l.from, from)), 0),
      worstEventLoopDelayMs: lags.reduce((n, l) => Math.max(n, l.eventLoopDelayMs), 0),
      worstUtilization: lags.reduce((n, l) => Math.max(n, l.utilization), 0),
      laggingNow: this.#laggingNow || backlogNow,
      lastLagEnd: lags.at(-1)?.to ?? null,
      worstBacklogMs,
      byServer,
    };
  }
}
