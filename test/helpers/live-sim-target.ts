// The live path behind the end-to-end alert test: the live simulated cluster (src/sim/live, the seed or healthy
// preset) whose orchestrator sends every CTX request through the real sidecar's relay ports (createDaemon, relay
// mode, as deploy/kubernetes runs it), with a closed-loop workload running while Prometheus scrapes the sidecar.
// The sidecar gets no router debug endpoint and no orchestrator log: it does not know the router's tokens_per_block
// (128 in the healthy preset, 32 in the seed) and must infer it from the routing — the deployment that used to page
// "cache signal inert" on a healthy cluster.
import type { Daemon } from '../../src/app/daemon/daemon.js';
import { startLiveCluster } from '../../src/sim/live/index.js';
import { presetConfig } from '../../src/sim/sim-config.js';
import type { Scenario, ScrapeTarget, TargetFactory } from './scrape-targets.js';
import { relayDaemonCtxUrls } from './relay-daemon.js';

/**
 * The preset's faults and routing unchanged; a small, fast cluster so findings have evidence within seconds.
 * `overrides` come last (say, more servers).
 */
export function liveConfig(scenario: Scenario, overrides: readonly string[] = []): ReturnType<typeof presetConfig> {
  return presetConfig(scenario, [
    'ctx.servers=3',
    'ctx.attention_dp=2',
    'ctx.overhead=20ms',
    'ctx.prefill_tokens_per_s=400000',
    'ctx.stall_every=0',
    'gen.overhead=20ms',
    'gen.ms_per_token=0.5',
    'workload.trajectories=100000',
    'workload.concurrency=6',
    'workload.system_prefix_tokens=1000',
    'workload.task_tokens_median=400',
    'workload.turns_min=3',
    'workload.turns_max=6',
    'workload.output_tokens_median=20',
    'workload.tool_tokens_median=100',
    'workload.tool_tokens_max=400',
    'workload.tool_latency=50ms',
    'workload.ramp=50ms',
    ...overrides,
  ]);
}

export const liveSimTargetFactory: TargetFactory = async (scenario: Scenario): Promise<ScrapeTarget> => {
  const holder: { daemon: Daemon | null } = { daemon: null };
  const cluster = await startLiveCluster(liveConfig(scenario), {
    timeScale: 4,
    ctxUrls: relayDaemonCtxUrls(holder),
  });
  const daemon = holder.daemon;
  if (daemon === null) {
    await cluster.stop();
    throw new Error('the sidecar relays did not start');
  }
  const workload = cluster.startWorkload();
  return {
    address: `127.0.0.1:${daemon.webAddress().port}`,
    causeAlerts: scenario === 'seed' ? ['KvEventsAbsent'] : [],
    mayBeEmpty: new Map([
      ['Stream batches: received, replayed, lost, malformed', 'a relay-mode deployment subscribes to no ZMQ stream'],
      [
        'Stream history incomplete (joined after the replay buffer)',
        'a relay-mode deployment subscribes to no ZMQ stream',
      ],
      ['Stream forwarding (--zmq-bind forward=)', 'a relay-mode deployment binds no socket to forward from'],
    ]),
    // the statistical rules need 60 decisions (40 follow-ups) in their window; 300 leaves them several evaluations
    minRequests: 300,
    close: async () => {
      await workload.stop();
      await cluster.stop();
      await daemon.stop();
    },
  };
};
