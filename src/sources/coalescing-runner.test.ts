import { describe, expect, it } from 'vitest';
import { CoalescingRunner } from './coalescing-runner.js';

function gate() {
  let open: () => void = () => undefined;
  const p = new Promise<void>((r) => (open = r));
  return { p, open };
}

describe('CoalescingRunner', () => {
  it('never runs two jobs at once; ticks skip, runFresh queues exactly one follow-up shared by all callers', async () => {
    let running = 0;
    let maxRunning = 0;
    let runs = 0;
    const gates: ReturnType<typeof gate>[] = [];
    const runner = new CoalescingRunner(async () => {
      running++;
      runs++;
      maxRunning = Math.max(maxRunning, running);
      const g = gate();
      gates.push(g);
      await g.p;
      running--;
    });
    const first = runner.tick();
    void runner.tick(); // skipped: joins the run in flight
    const fresh1 = runner.runFresh();
    const fresh2 = runner.runFresh();
    expect(runs).toBe(1);
    gates[0]?.open();
    await first;
    await new Promise((r) => setImmediate(r));
    expect(runs).toBe(2); // one follow-up for both fresh callers
    gates[1]?.open();
    await Promise.all([fresh1, fresh2]);
    expect(maxRunning).toBe(1);
    await runner.idle();
    expect(runner.busy).toBe(false);
  });

  it('swallows a failing job so loops never reject', async () => {
    const runner = new CoalescingRunner(() => Promise.reject(new Error('boom')));
    await expect(runner.tick()).resolves.toBeUndefined();
    await expect(runner.runFresh()).resolves.toBeUndefined();
  });
});
