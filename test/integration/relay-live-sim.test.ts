// The acceptance test of the sidecar: the live simulator's orchestrator points at kvsentinel's relay ports; every
// request completes; the simulator's router applies every event its workers emitted exactly once, bit-identical;
// the scrape is promtool-clean; a real ws client sees decisions without token ids.
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { EventDigest } from '../../src/sim/live/event-digest.js';
import { startLiveCluster } from '../../src/sim/live/index.js';
import { smallConfig } from '../sim/live-helpers.js';
import { promtoolProblems } from '../helpers/promtool.js';
import { eventually } from '../helpers/recording-sink.js';
import { liveSidecarPerTest } from '../helpers/live-sidecar.js';
import { relayDaemonCtxUrls } from '../helpers/relay-daemon.js';
import { appliedBy, nextPoll } from '../helpers/relay-exactly-once.js';

const sidecar = liveSidecarPerTest();

interface AppliedDoc {
  parse_issues: number;
  servers: { server: string; url: string; total: number; dropped: number; events: EventDigest[] }[];
}

describe('kvsentinel relay in front of the live simulator', () => {
  it('every request completes and the router applies every emitted event exactly once, bit-identical', async () => {
    sidecar.cluster = await startLiveCluster(smallConfig('healthy'), {
      timeScale: 2,
      ctxUrls: relayDaemonCtxUrls(sidecar),
    });
    const d = sidecar.daemon;
    if (d === null) throw new Error('relays did not start');
    const web = `http://127.0.0.1:${d.webAddress().port}`;
    const frames: string[] = [];
    const ws = new WebSocket(`ws://127.0.0.1:${d.webAddress().port}/ws`);
    ws.on('message', (m: Buffer) => frames.push(m.toString('utf8')));
    await new Promise((r) => ws.once('open', r));

    const live = sidecar.cluster;
    const summary = await live.startWorkload().done;
    expect(summary.requests).toBeGreaterThan(10);
    expect(summary.failedRequests).toBe(0);
    expect(summary.cacheHitRatio).toBeGreaterThan(0.5); // the router's cache signal works through the relay

    // the router polls only in finish_request: what it applied, then what its next poll brings (an attention-DP
    // rank's last events reach the worker's queue after the gather period, so the relay may drain them after the
    // router's last poll), is exactly what the worker served to the relay, in order
    const appliedDoc = async (): Promise<AppliedDoc> =>
      JSON.parse(await (await request(live.appliedEventsUrl)).body.text()) as AppliedDoc;
    for (const w of sidecar.cluster.workers) {
      const applied = await appliedBy(live.appliedEventsUrl, w.id);
      const rest = await nextPoll(live.ctxAddresses[w.id]!);
      const all = [...applied, ...rest];
      const served = sidecar.cluster.worker(w.id).served.entries;
      expect(served.length).toBeGreaterThan(0);
      // hashes as exact decimal strings
      expect(all).toEqual(served);
      expect(all.some((e) => e.type === 'stored' && e.block_hashes.some((h) => BigInt(h) > 2n ** 53n))).toBe(true);
      for (const rank of [0, 1]) {
        const ids = all.filter((e) => e.attention_dp_rank === rank).map((e) => e.event_id);
        expect(ids).toEqual(ids.map((_, i) => i));
      }
    }
    expect((await appliedDoc()).parse_issues).toBe(0);

    await eventually(() => d.snapshot().requests === summary.requests, 5_000, 'state saw every request');
    const snap = d.snapshot();
    expect(snap.findings.filter((f) => f.severity === 'critical').map((f) => f.id)).toEqual([]);
    const metrics = await (await request(`${web}/metrics`)).body.text();
    expect(promtoolProblems(metrics).problems).toEqual([]);
    expect(metrics).toContain('kvsentinel_up{source="relay:ctx0"} 1');
    await eventually(
      () => frames.filter((f) => f.includes('"type":"decision"')).length === summary.requests,
      10_000,
      'decision frames',
    );
    expect(frames.some((f) => f.includes('"type":"outcome"'))).toBe(true);
    expect(frames.every((f) => !/prompt_token_ids|\[\s*\d+\s*,\s*\d+/.test(f))).toBe(true);
    ws.close();
  }, 60_000);

  it('a worker restart behind the relay: kvsentinel_up drops to 0, comes back, and the event stream reset is counted', async () => {
    sidecar.cluster = await startLiveCluster(smallConfig('healthy', ['ctx.restart_downtime=1500ms']), {
      timeScale: 1,
      ctxUrls: relayDaemonCtxUrls(sidecar, { relay: { drain_interval: '50ms', drain_timeout: '300ms' } }),
    });
    const d = sidecar.daemon;
    if (d === null) throw new Error('relays did not start');
    const live = sidecar.cluster;
    await eventually(() => d.status.list().find((s) => s.source === 'relay:ctx0')?.up === true, 5_000, 'relay up');
    // some traffic first, so event ids have moved past the created events
    const relay0 = `http://${live.ctxAddresses['ctx0']}`;
    for (let i = 0; i < 4; i++) {
      const prompt = Array.from({ length: 300 }, (_, k) => 1_000 * i + k);
      const res = await request(`${relay0}/v1/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', prompt, max_tokens: 1 }),
      });
      expect(res.statusCode).toBe(200);
      await res.body.text();
    }
    await eventually(
      () =>
        (d
          .snapshot()
          .servers.find((s) => s.server === 'ctx0')
          ?.ranks.reduce((n, r) => n + (r.eventsByType.stored ?? 0), 0) ?? 0) > 0,
      5_000,
      'stored events',
    );
    const restarting = live.restartWorker('ctx0');
    // down because the worker refuses connections (a drain slowed by a loaded machine may time out first)
    await eventually(
      () => {
        const s = d.status.list().find((x) => x.source === 'relay:ctx0');
        return s?.up === false && (s.errors.connect ?? 0) > 0;
      },
      5_000,
      'relay down, connection refused',
    );
    const metrics = await (await request(`http://127.0.0.1:${d.webAddress().port}/metrics`)).body.text();
    expect(metrics).toContain('kvsentinel_up{source="relay:ctx0"} 0');
    expect(metrics).toMatch(/kvsentinel_source_errors_total\{source="relay:ctx0",reason="connect"\} [1-9]/);
    await restarting;
    await eventually(
      () => d.status.list().find((s) => s.source === 'relay:ctx0')?.up === true,
      10_000,
      'relay back up',
    );
    await eventually(
      () =>
        d
          .snapshot()
          .servers.find((s) => s.server === 'ctx0')
          ?.ranks.some((r) => r.resets > 0) ?? false,
      10_000,
      'reset counted',
    );
  }, 60_000);
});
