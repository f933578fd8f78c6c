// sidecar-lagging: kvsentinel itself fell behind (its event loop ran late or saturated, from its own CPU load or a
// starved host; or, with the loop on time, a ZMQ subscriber took batches slower than they came and its queue never
// emptied), and what it lost meanwhile (a ZMQ socket past its high-water mark, a drain or a replay that timed out)
// is its own loss. It says so about itself; event-queue-shared leaves those gaps out, and while it is behind the
// findings that need every event are held back (run-rules.ts), so an overloaded sidecar never blames the fleet.
import { ratio } from './rule-math.js';
import type { Rule } from '../rule.js';

export const sidecarLagging: Rule = {
  id: 'sidecar-lagging',
  evaluate(input) {
    const s = input.sidecar;
    if (s.lagIntervals === 0 && s.worstBacklogMs === 0) return null;
    const lost = input.servers.filter((x) => x.sidecarGaps > 0);
    // a late loop that lost nothing leaves the tables whole: no finding (and nothing held back)
    if (lost.length === 0) return null;
    const gaps = lost.reduce((n, x) => n + x.sidecarGaps, 0);
    const missed = lost.reduce((n, x) => n + x.sidecarMissed, 0);
    const late =
      s.lagIntervals > 0
        ? `its event loop ran up to ${s.worstEventLoopDelayMs.toFixed(0)} ms late (up to ${(100 * s.worstUtilization).toFixed(0)}% busy) for ${(s.laggingMs / 1000).toFixed(1)} s of the window`
        : null;
    const behind =
      s.worstBacklogMs > 0
        ? `a ZMQ subscriber's queue held a backlog for up to ${(s.worstBacklogMs / 1000).toFixed(1)} s (it took batches slower than they arrived, so its high-water mark dropped them)`
        : null;
    const loss =
      gaps > 0
        ? `; ${gaps} event gap${gaps === 1 ? '' : 's'} (${missed} events or batches) on ${lost.map((x) => x.server).join(', ')} fell in that time: kvsentinel's own loss, not the deployment's, and its tables miss that state until it turns over`
        : '';
    const now = s.laggingNow ? '; it is behind now: findings that need every event wait until it catches up' : '';
    return {
      servers: lost.map((x) => x.server),
      summary: `kvsentinel itself fell behind: ${[late, behind].filter((p) => p !== null).join('; ')}${loss}${now}`,
      evidence: {
        lag_intervals: s.lagIntervals,
        lagging_ms: s.laggingMs,
        worst_event_loop_delay_ms: Math.round(s.worstEventLoopDelayMs),
        worst_utilization: Math.round(1000 * s.worstUtilization) / 1000,
        worst_backlog_ms: Math.round(s.worstBacklogMs),
        lagging_now: s.laggingNow,
        sidecar_gaps: gaps,
        sidecar_missed: missed,
        share_of_gaps: ratio(
          gaps,
          input.servers.reduce((n, x) => n + x.gaps, 0),
        ),
        by_server: lost.map((x) => `${x.server}: ${x.sidecarGaps} gaps, ${x.sidecarMissed} lost`).join('; '),
      },
      cause:
        "the sidecar's own CPU: more events than one process applies (a fleet's streams at full rate), a host that starves it, or a long pause; nothing in the deployment is implied",
      // a replay refills only what the publisher still buffers: a socket drops once both ends' queues are full, and
      // at vLLM's defaults the gap shows after the sidecar read those, when vLLM's buffer has moved past it
      // (docs/event-streams.md, "What replay can refill")
      fix: "give the sidecar a core of its own (a CPU request of at least 1 and no lower limit) and split the servers over more sidecars (docs/sharding.md). A replay_endpoint does not bring such a loss back at vLLM's defaults: the queues between publisher and sidecar (hwm 100,000 batches at each end) outlast the replay buffer (buffer_steps 10,000), so the gap shows only once the buffer has moved past it",
    };
  },
};
