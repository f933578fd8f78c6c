// What the live simulator holds of a prompt while its request is in flight. The demo's memory grew with the run
// because every in-flight prompt (hundreds, each longer every turn) was held several times over: the client's cached
// JSON text and undici's copy of its body, the orchestrator's body text, its undici copy of the CTX body and the
// GEN step holding the text, the worker's body text behind its parsed ids. Here a real cluster (client, orchestrator,
// worker on loopback ports, in this process) holds every request at the worker and the retained heap is weighed
// after full collections, per token in flight.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import { startLiveCluster, type LiveCluster } from '../../src/sim/live/index.js';
import { systemPrefix, Trajectory } from '../../src/sim/workload.js';
import { smallConfig } from './live-helpers.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function retainedBytes(): number {
  for (let i = 0; i < 3; i++) gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 45_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

let cluster: LiveCluster | null = null;
afterEach(async () => {
  await cluster?.stop();
  cluster = null;
});

describe('live simulator memory', () => {
  it('holds an in-flight prompt about once per hop: ids, not copies of its text', async () => {
    const concurrency = 16;
    // long prompts that never finish prefill (1 token/s, one at a time): every request waits at its worker
    const config = smallConfig('seed', [
      'ctx.prefill_tokens_per_s=1',
      'ctx.max_concurrency=1',
      'workload.system_prefix_tokens=60000',
      `workload.concurrency=${concurrency}`,
      `workload.trajectories=${concurrency}`,
      'workload.ramp=0ms',
    ]);
    cluster = await startLiveCluster(config);
    const c = cluster;
    const before = retainedBytes();
    c.startWorkload();
    await until(
      () => c.workers.reduce((n, w) => n + c.worker(w.id).worker.inflight, 0) === concurrency,
      'every request to reach its worker',
    );
    const retained = retainedBytes() - before;

    const prefix = systemPrefix(config.workload);
    let tokens = 0;
    for (let i = 0; i < concurrency; i++) tokens += new Trajectory(config.workload, i, prefix).length;
    const perToken = retained / tokens;
    // each hop's ids are 4 B per token (the client's trajectory, the orchestrator's routed prompt, the worker's
    // queued request) plus the routers' block hashes; the body text, 5–6 B per token at each hop, is not kept
    expect(perToken, `${(retained / 2 ** 20).toFixed(1)} MiB retained for ${tokens} tokens in flight`).toBeLessThan(24);
    expect(perToken).toBeGreaterThan(4); // the ids themselves are held: the measurement sees the prompts
  });
});
