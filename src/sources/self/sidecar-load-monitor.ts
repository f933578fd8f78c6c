// The sidecar's own load: once an interval (1 s), the 99th percentile of its event loop's delay and the share of
// the interval the loop was busy, as a sidecar-load observation. The state decides what counts as lagging and which
// event gaps that explains (core/state/sidecar-load-ledger.ts). The histogram samples every 20 ms, so a loop
// stalled for a second shows as a ~1 s delay in the interval it ends in.
import { monitorEventLoopDelay, performance, type EventLoopUtilization } from 'node:perf_hooks';
import type { Clock, ObservationSink } from '../ports.js';

export interface SidecarLoadMonitor {
  stop(): void;
}

export function startSidecarLoadMonitor(
  deps: { readonly sink: ObservationSink; readonly clock: Clock },
  intervalMs = 1_000,
): SidecarLoadMonitor {
  const delay = monitorEventLoopDelay({ resolution: 20 });
  delay.enable();
  let lastElu: EventLoopUtilization = performance.eventLoopUtilization();
  let last = deps.clock();
  const timer = setInterval(() => {
    const now = deps.clock();
    const elu = performance.eventLoopUtilization(lastElu);
    lastElu = performance.eventLoopUtilization();
    // nanoseconds; a histogram with no sample yet reports 0
    const p99Ms = delay.count > 0 ? delay.percentile(99) / 1e6 : 0;
    delay.reset();
    deps.sink.apply({
      kind: 'sidecar-load',
      ts: now,
      intervalMs: Math.max(0, now - last),
      eventLoopDelayMs: p99Ms,
      utilization: elu.utilization,
    });
    last = now;
  }, intervalMs);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      delay.disable();
    },
  };
}
