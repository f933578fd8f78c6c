// Acceptance of issue 13 through the real relay daemon in front of the live simulator: what current TensorRT-LLM
// orchestrators and workers really send — msgpack bodies without X-Correlation-ID, text and chat prompts with the
// workers' prompt_token_ids (also as base64), workers closing idle keep-alive sockets, a router pool reconnecting
// from a new port before every poll, two orchestrator replicas, and no router polling at all.
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import type { Daemon } from '../../src/app/daemon/daemon.js';
import type { SentinelStateSnapshot } from '../../src/core/state/sentinel-state.js';
import {
  LiveOrchestrator,
  LiveScheduler,
  LiveWorkload,
  startLiveCluster,
  type LiveCluster,
  type LiveWorkloadSummary,
} from '../../src/sim/live/index.js';
import { eventually } from '../helpers/recording-sink.js';
import { expectExactlyOnce } from '../helpers/relay-exactly-once.js';
import { relayDaemonCtxUrls } from '../helpers/relay-daemon.js';
import { smallConfig } from '../sim/live-helpers.js';

const running: { cluster: LiveCluster | null; daemon: Daemon | null; extra: (() => Promise<void>)[] } = {
  cluster: null,
  daemon: null,
  extra: [],
};
afterEach(async () => {
  for (const stop of running.extra.splice(0)) await stop();
  await running.cluster?.stop();
  await running.daemon?.stop();
  running.cluster = null;
  running.daemon = null;
});

const RELAY_SETTINGS = { relay: { drain_interval: '100ms' }, server_info_interval: '1s' };

async function start(
  preset: 'healthy' | 'seed',
  sets: readonly string[],
  settings: Record<string, unknown> = RELAY_SETTINGS,
  timeScale = 2,
) {
  const holder: { daemon: Daemon | null } = { daemon: null };
  const cluster = await startLiveCluster(smallConfig(preset, sets), {
    timeScale,
    ctxUrls: relayDaemonCtxUrls(holder, settings),
  });
  running.cluster = cluster;
  running.daemon = holder.daemon;
  if (holder.daemon === null) throw new Error('relays did not start');
  return { cluster, daemon: holder.daemon };
}

async function settled(daemon: Daemon, summary: LiveWorkloadSummary): Promise<SentinelStateSnapshot> {
  await eventually(() => daemon.snapshot().requests === summary.requests, 10_000, 'the state saw every request');
  // the last outcomes and drains land asynchronously
  await new Promise((r) => setTimeout(r, 300));
  return daemon.snapshot();
}

async function metricsOf(daemon: Daemon): Promise<string> {
  return (await request(`http://127.0.0.1:${daemon.webAddress().port}/metrics`)).body.text();
}

function unreadable(metrics: string): number {
  return [...metrics.matchAll(/^kvsentinel_relay_requests_unreadable_total\{[^}]*\} (\d+)/gm)].reduce(
    (n, m) => n + Number(m[1]),
    0,
  );
}

describe('the relay reads what the real orchestrator sends', () => {
  it('msgpack CTX bodies without X-Correlation-ID: decisions keep their ids and trajectories', async () => {
    const { cluster, daemon } = await start('healthy', ['router.ctx_body=msgpack']);
    const summary = await cluster.startWorkload().done;
    expect(summary.failedRequests).toBe(0);
    const snap = await settled(daemon, summary);
    // the conversation id came from disaggregated_params (no header): follow-ups are tracked
    expect(snap.stickiness).not.toBeNull();
    expect(snap.decisions.followupTurns).toBeGreaterThan(0);
    // the prompt ids came from the msgpack body: the oracle is worker truth, and routing follows it
    expect(snap.oracleBasis).toBe('worker-truth');
    expect(snap.decisions.oracleBest).toBeGreaterThan(snap.decisions.notOracleBest);
    expect(unreadable(await metricsOf(daemon))).toBe(0);
    expect(snap.findings.filter((f) => f.severity === 'critical').map((f) => f.id)).toEqual([]);
  }, 60_000);

  it.each([
    ['chat', ['workload.request_format=chat']],
    ['chat, ids as base64', ['workload.request_format=chat', 'router.return_prompt_token_ids_b64=true']],
    ['text', ['workload.request_format=text']],
  ])(
    "%s traffic: the oracle comes from the workers' prompt_token_ids, never below the realised hit",
    async (_name, sets) => {
      const { cluster, daemon } = await start('healthy', sets);
      const summary = await cluster.startWorkload().done;
      expect(summary.failedRequests).toBe(0);
      const snap = await settled(daemon, summary);
      expect(snap.oracleBasis).toBe('worker-truth');
      expect(snap.oracleHitRatio!).toBeGreaterThanOrEqual(snap.cacheHitRatio!);
      // the requests carried no ids: the joins came from the workers' own
      expect(snap.decisions.oracleBest + snap.decisions.notOracleBest + snap.decisions.noPrefix).toBeGreaterThan(0);
      expect(unreadable(await metricsOf(daemon))).toBe(0);
    },
    60_000,
  );

  it("chat traffic with the router writing its ids into the CTX request (msgpack): the relay predicts the router's matches", async () => {
    const { cluster, daemon } = await start('healthy', [
      'workload.request_format=chat',
      'router.write_token_ids=true',
      'router.ctx_body=msgpack',
    ]);
    const summary = await cluster.startWorkload().done;
    expect(summary.failedRequests).toBe(0);
    const snap = await settled(daemon, summary);
    // the ids in the request are the router's: its table's matches are predicted from them
    expect(snap.servers.reduce((n, s) => n + s.predictedRouterCachedTokens, 0)).toBeGreaterThan(0);
    expect(snap.oracleBasis).toBe('worker-truth');
    expect(unreadable(await metricsOf(daemon))).toBe(0);
  }, 60_000);

  it('chat traffic on the seed preset (events off): tokens lost > 0', async () => {
    const { cluster, daemon } = await start('seed', [
      'workload.request_format=chat',
      'workload.trajectories=12',
      'workload.concurrency=6',
    ]);
    const summary = await cluster.startWorkload().done;
    const snap = await settled(daemon, summary);
    expect(snap.oracleBasis).toBe('sticky-ideal');
    expect(snap.tokensLostPerSecond!).toBeGreaterThan(0);
  }, 60_000);

  it('workers closing idle keep-alive sockets: no request fails', async () => {
    // trtllm-serve's 5 s and the relay's 4 s, scaled down 10× so idle gaps between turns cross them often
    const { cluster, daemon } = await start(
      'healthy',
      ['ctx.keep_alive_timeout=500ms', 'workload.tool_latency=700ms', 'workload.concurrency=2'],
      { ...RELAY_SETTINGS, relay: { drain_interval: '100ms', upstream_keep_alive: '400ms' } },
      1,
    );
    const summary = await cluster.startWorkload().done;
    expect(summary.failedRequests).toBe(0);
    const snap = await settled(daemon, summary);
    expect(snap.servers.every((s) => s.requestFailures === 0)).toBe(true);
  }, 90_000);

  it('a router reconnecting from a new port before every poll receives each event exactly once', async () => {
    const { cluster, daemon } = await start('healthy', ['router.poll_new_connection=true']);
    const summary = await cluster.startWorkload().done;
    expect(summary.failedRequests).toBe(0);
    await expectExactlyOnce(cluster, cluster.appliedEventsUrl, (id) => cluster.ctxAddresses[id]!);
    expect(await metricsOf(daemon)).toMatch(/kvsentinel_relay_events_redelivered_total\{server="ctx0"\} 0/);
  }, 60_000);

  it('two orchestrator replicas on their own relay ports: each receives every event once', async () => {
    const holder: { daemon: Daemon | null } = { daemon: null };
    const config = smallConfig('healthy');
    const cluster = await startLiveCluster(config, {
      timeScale: 2,
      // each relay listens on two ports: the first for the cluster's orchestrator, the second for replica B
      ctxUrls: relayDaemonCtxUrls(holder, RELAY_SETTINGS, '127.0.0.1:0,0'),
    });
    running.cluster = cluster;
    running.daemon = holder.daemon;
    const daemon = holder.daemon!;
    const scheduler = new LiveScheduler(2);
    const replicaB = new LiveOrchestrator(scheduler, {
      host: '127.0.0.1',
      port: 0,
      targets: cluster.workers.map((w) => ({ id: w.id, address: `127.0.0.1:${daemon.relayAddresses(w.id)[1]!.port}` })),
      router: config.router,
      gen: config.gen,
    });
    await replicaB.start();
    running.extra.push(async () => {
      scheduler.stop();
      await replicaB.stop();
    });
    const workloadB = new LiveWorkload(scheduler, {
      url: replicaB.url,
      workload: { ...config.workload, seed: config.workload.seed + 1 },
    });
    workloadB.start();
    running.extra.unshift(async () => void (await workloadB.stop()));
    const [a, b] = await Promise.all([cluster.startWorkload().done, workloadB.done]);
    expect(a.failedRequests + b.failedRequests).toBe(0);
    // each replica: what its router applied plus its next poll is the worker's whole stream, every event once
    await expectExactlyOnce(cluster, cluster.appliedEventsUrl, (id) => cluster.ctxAddresses[id]!);
    await expectExactlyOnce(
      cluster,
      `${replicaB.url}/debug/applied-events`,
      (id) => `127.0.0.1:${daemon.relayAddresses(id)[1]!.port}`,
    );
    expect(await metricsOf(daemon)).toMatch(/kvsentinel_relay_events_redelivered_total\{server="ctx0"\} 0/);
  }, 90_000);

  it('no router polling: no false finding, and the oracle never under the realised hit', async () => {
    const { cluster, daemon } = await start('healthy', ['router.poll_on_finish=false', 'workload.trajectories=10']);
    const summary = await cluster.startWorkload().done;
    expect(summary.failedRequests).toBe(0);
    const snap = await settled(daemon, summary);
    const ids = snap.findings.map((f) => f.id);
    for (const wrong of [
      'events-partial-ranks',
      'events-absent',
      'event-queue-shared',
      'hash-mismatch',
      'tokens-per-block-mismatch',
      'router-hash-divergence',
    ])
      expect(ids).not.toContain(wrong);
    expect(snap.oracleBasis).toBe('worker-truth');
    expect(snap.oracleHitRatio!).toBeGreaterThanOrEqual(snap.cacheHitRatio!);
  }, 60_000);
});
