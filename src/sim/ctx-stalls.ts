// ctx.stall_every / ctx.stall: each CTX server stops admitting prefills now and then (KV-transfer backpressure), on
// a seeded schedule per server, so every row of a seed stalls alike and both drivers stall the same way.
import type { CtxWorker } from './ctx-worker.js';
import { Rng } from './rng.js';
import type { Scheduler } from './scheduler.js';
import type { SimConfig } from './sim-config.js';

/** Schedules every worker's stalls from now on while `running()` says so; nothing when ctx.stall_every is 0. */
export function scheduleCtxStalls(
  scheduler: Scheduler,
  workers: readonly CtxWorker[],
  config: SimConfig,
  running: () => boolean,
): void {
  const c = config.ctx;
  if (c.stallEveryMs <= 0) return;
  workers.forEach((worker, index) => {
    const rng = new Rng(config.workload.seed, 0x57a11 + index);
    const next = (): void => {
      if (!running()) return;
      worker.stall(rng.exponential(c.stallMs));
      scheduler.at(scheduler.now() + rng.exponential(c.stallEveryMs), next);
    };
    scheduler.at(scheduler.now() + rng.exponential(c.stallEveryMs), next);
  });
}
