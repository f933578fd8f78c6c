// Fault injection against the live simulator with the daemon's relay ports between the orchestrator and the
// workers (the production topology): a rank that never arrives (ctx.adp_gather_drop), and a worker crash and restart
// (connection refused, then event_id starting over at 0). Each is counted in /metrics, nothing crashes, and the
// other worker's stream reaches the router exactly once and complete.
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { buildConfig } from '../../src/app/config/serve-config.js';
import { createDaemon, type Daemon } from '../../src/app/daemon/daemon.js';
import { startLiveCluster, type LiveCluster } from '../../src/sim/live/index.js';
import type { EventDigest } from '../../src/sim/live/event-digest.js';
import { readUntil } from '../helpers/test-resources.js';
import { get, smallConfig } from '../sim/live-helpers.js';

let cluster: LiveCluster | null = null;
let daemon: Daemon | null = null;
afterEach(async () => {
  await cluster?.stop();
  await daemon?.stop();
  cluster = null;
  daemon = null;
});

const valueOf = (metrics: string, series: string): number => {
  const line = metrics.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
};

async function clusterBehindRelays(
  extra: readonly string[],
): Promise<{ cluster: LiveCluster; daemon: Daemon; metrics: () => Promise<string> }> {
  let d: Daemon | null = null;
  const c = await startLiveCluster(smallConfig('healthy', extra), {
    timeScale: 2,
    ctxUrls: async (workers) => {
      d = createDaemon(
        buildConfig(
          {
            web: { listen_address: '127.0.0.1:0' },
            relays: workers.map((w) => ({ id: w.id, upstream: w.url, listen: '127.0.0.1:0' })),
            relay: { drain_interval: '50ms', drain_timeout: '500ms' },
            server_info_interval: '200ms',
            timeout: '500ms',
          },
          {},
        ),
      );
      await d.start();
      const relays = d;
      return Object.fromEntries(workers.map((w) => [w.id, `http://127.0.0.1:${relays.relayAddress(w.id)?.port}`]));
    },
  });
  const started = d as unknown as Daemon;
  const web = started.webAddress();
  return {
    cluster: c,
    daemon: started,
    metrics: async () => (await request(`http://${web.host}:${web.port}/metrics`)).body.text(),
  };
}

interface AppliedDoc {
  servers: { server: string; events: EventDigest[] }[];
}

describe('live simulator behind the relay, with faults', () => {
  it('a missing attention-DP rank: only rank 0 counted, everything it sent reaches the router exactly once', async () => {
    const run = await clusterBehindRelays(['ctx.adp_gather_drop=true']);
    cluster = run.cluster;
    daemon = run.daemon;
    const summary = await cluster.startWorkload().done;
    expect(summary.failedRequests).toBe(0);
    const stored = (t: string, server: string): number =>
      valueOf(t, `kvsentinel_kv_events_total{server="${server}",rank="0",type="stored"}`);
    const m = await readUntil(
      () => run.metrics(),
      (t) => stored(t, 'ctx0') > 0 && stored(t, 'ctx1') > 0,
      'stored events counted for both servers',
      10_000,
    );
    for (const server of ['ctx0', 'ctx1']) {
      expect(valueOf(m, `kvsentinel_kv_events_total{server="${server}",rank="0",type="stored"}`)).toBeGreaterThan(0);
      expect(m).not.toContain(`kvsentinel_kv_events_total{server="${server}",rank="1"`);
      expect(valueOf(m, `kvsentinel_up{source="relay:${server}"}`)).toBe(1);
    }
    const applied = JSON.parse((await get(cluster.appliedEventsUrl)).text) as AppliedDoc;
    for (const s of applied.servers) {
      const served = cluster.worker(s.server).served.entries;
      // the router received what the worker served, minus the tail the relay still holds for its next poll
      expect(served.slice(0, s.events.length)).toEqual(s.events);
      expect(s.events.every((e) => e.attention_dp_rank === 0 || e.attention_dp_rank === null)).toBe(true);
    }
  }, 30_000);

  it('a worker crash and restart: connection errors and one stream reset counted; the other worker loses nothing', async () => {
    const run = await clusterBehindRelays(['ctx.attention_dp=1']);
    cluster = run.cluster;
    daemon = run.daemon;
    await cluster.startWorkload({ trajectories: 3 }).done;
    await cluster.restartWorker('ctx0');
    await cluster.startWorkload({ trajectories: 3 }).done;
    const m = await readUntil(
      () => run.metrics(),
      (t) =>
        valueOf(t, 'kvsentinel_kv_event_stream_resets_total{server="ctx0",rank="0"}') >= 1 &&
        valueOf(t, 'kvsentinel_up{source="relay:ctx0"}') === 1,
      'reset counted and relay up again',
      10_000,
    );
    expect(valueOf(m, 'kvsentinel_source_errors_total{source="relay:ctx0",reason="connect"}')).toBeGreaterThanOrEqual(
      1,
    );
    expect(valueOf(m, 'kvsentinel_kv_event_stream_resets_total{server="ctx1",rank="0"}')).toBe(0);
    expect(valueOf(m, 'kvsentinel_kv_event_gaps_total{server="ctx1",rank="0"}')).toBe(0);
    expect(valueOf(m, 'kvsentinel_source_errors_total{source="relay:ctx1",reason="connect"}')).toBe(0);
    const applied = JSON.parse((await get(cluster.appliedEventsUrl)).text) as AppliedDoc;
    const ctx1 = applied.servers.find((s) => s.server === 'ctx1');
    const ids = ctx1?.events.map((e) => e.event_id) ?? [];
    expect(ids.length).toBeGreaterThan(0);
    expect(ids).toEqual(ids.map((_, i) => i)); // 0, 1, 2 … exactly once, no gap
    expect(cluster.worker('ctx1').served.entries.slice(0, ids.length)).toEqual(ctx1?.events);
  }, 30_000);
});
