// Acceptance-style run until the live simulator lands: the simulator's CTX worker model behind real ports, the
// sidecar relaying them, and a kv_cache_aware-style router that routes by its block table, polls after each finish
// and applies what it receives. The router must apply every event the workers emitted, exactly once, bit-identical.
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { buildConfig } from '../../src/app/config/serve-config.js';
import { createDaemon } from '../../src/app/daemon/daemon.js';
import { routerBlockKeys } from '../../src/core/hashing/router-chunking.js';
import { RouterReplicaTable } from '../../src/core/tables/router-replica-table.js';
import { parseKvEvents } from '../../src/core/wire/parse-kv-events.js';
import { promtoolProblems } from '../helpers/promtool.js';
import { eventually } from '../helpers/recording-sink.js';
import { startSimWorkerServer, type SimWorkerServer } from '../helpers/sim-worker-server.js';
import { cleanupsAfterEach } from '../helpers/test-resources.js';

const cleanups = cleanupsAfterEach();

describe('relay in front of the simulator worker model', () => {
  it('the router applies every emitted event exactly once, bit-identical, and its cache signal works', async () => {
    const workers: SimWorkerServer[] = [];
    for (const id of ['ctx0', 'ctx1', 'ctx2']) {
      const w = await startSimWorkerServer(id);
      cleanups.push(() => w.close());
      workers.push(w);
    }
    const daemon = createDaemon(
      buildConfig(
        {
          web: { listen_address: '127.0.0.1:0' },
          relays: workers.map((w, i) => ({ id: `ctx${i}`, upstream: w.url, listen: '127.0.0.1:0' })),
          relay: { drain_interval: '20ms' },
          server_info_interval: '1s',
        },
        {},
      ),
    );
    await daemon.start();
    cleanups.push(() => daemon.stop());
    const relays = workers.map((_, i) => `http://127.0.0.1:${daemon.relayAddress(`ctx${i}`)?.port}`);

    const tpb = 16;
    const table = new RouterReplicaTable();
    const received = relays.map(() => [] as string[]);
    const active = relays.map(() => 0);
    let matchedFollowups = 0;
    let followups = 0;
    let nextId = 1;
    // 6 trajectories × 4 turns, 3 at a time; each turn extends the previous prompt (agentic growth)
    const trajectory = async (t: number): Promise<void> => {
      let prompt: number[] = Array.from({ length: 50 }, (_, k) => 1000 * (t + 1) + k);
      for (let turn = 0; turn < 4; turn++) {
        const keys = routerBlockKeys(prompt, tpb, 'v1_block_key');
        // kv_cache_aware score: matched/padded − active/max_batch_size
        const scores = relays.map(
          (_, s) => table.matchedTokens(`ctx${s}`, keys, tpb) / Math.max(keys.length * tpb, 1) - active[s]! / 64,
        );
        const best = scores.indexOf(Math.max(...scores));
        if (turn > 0) {
          followups++;
          if (table.matchedBlocks(`ctx${best}`, keys) > 0) matchedFollowups++;
        }
        active[best]!++;
        const res = await request(`${relays[best]}/v1/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-correlation-id': `traj-${t}` },
          body: JSON.stringify({
            model: 'm',
            prompt,
            max_tokens: 1,
            disaggregated_params: { request_type: 'context_only', disagg_request_id: nextId++ },
          }),
        });
        expect(res.statusCode).toBe(200);
        await res.body.text();
        active[best]!--;
        // finish_request → poll_and_update
        const poll = await request(`${relays[best]}/kv_cache_events`, { method: 'POST' });
        const parsed = parseKvEvents(await poll.body.text());
        expect(parsed.issues).toEqual([]);
        for (const e of parsed.events) {
          received[best]!.push(e.raw);
          table.apply(`ctx${best}`, e.event);
        }
        prompt = [...prompt, ...Array.from({ length: 40 }, (_, k) => 7 * turn + k + 100 * t)];
      }
    };
    await Promise.all(
      [0, 1, 2].map(async (lane) => {
        for (let t = lane; t < 6; t += 3) await trajectory(t);
      }),
    );
    // a last poll per server collects what the workers emitted after the last finish
    await new Promise((r) => setTimeout(r, 50));
    for (const [s, base] of relays.entries()) {
      const poll = await request(`${base}/kv_cache_events`, { method: 'POST' });
      for (const e of parseKvEvents(await poll.body.text()).events) {
        received[s]!.push(e.raw);
        table.apply(`ctx${s}`, e.event);
      }
    }

    for (const [s, w] of workers.entries()) {
      expect(w.emitted.length).toBeGreaterThan(2);
      expect(received[s]).toEqual(w.emitted); // exactly once, in order, byte for byte
      // the router's table equals one built from the worker's own output
      const direct = new RouterReplicaTable();
      for (const e of parseKvEvents(`[${w.emitted.join(',')}]`).events) direct.apply('x', e.event);
      expect(table.blockCount(`ctx${s}`)).toBe(direct.blockCount('x'));
      expect(table.blockCount(`ctx${s}`)).toBeGreaterThan(0);
    }
    expect(received.flat().join(',')).toMatch(/"block_hash":\d{17,20}/);
    expect(received.flat().some((r) => r.includes('"attention_dp_rank":1'))).toBe(true);
    // follow-up turns find their prefix through the relay (a dead signal gives 0; a poll right after a response can
    // miss events still crossing the ADP gather, as on real workers, so not necessarily every one)
    expect(matchedFollowups).toBeGreaterThanOrEqual(Math.ceil(followups * 0.8));

    await eventually(() => daemon.snapshot().requests === 24, 5_000, 'state saw every request');
    const snap = daemon.snapshot();
    // the one state agrees: a healthy relay, realised hits equal to what the workers could serve
    expect(snap.findings.filter((f) => f.severity === 'critical')).toEqual([]);
    expect(snap.decisions.followupTurns).toBe(18);
    expect(snap.cacheHitRatio).toBeGreaterThan(0.4);
    expect(snap.servers.reduce((n, s) => n + s.ranks.reduce((m, r) => m + r.gaps, 0), 0)).toBe(0);
    expect(snap.findings.map((f) => f.id)).not.toContain('event-queue-shared');
    expect(snap.findings.map((f) => f.id)).not.toContain('router-not-polling');
    const base = `http://127.0.0.1:${daemon.webAddress().port}`;
    const metrics = await (await request(`${base}/metrics`)).body.text();
    expect(promtoolProblems(metrics).problems).toEqual([]);
    const delivered = [
      ...metrics.matchAll(/^kvsentinel_relay_events_delivered_total\{server="ctx\d"\} (\d+)$/gm),
    ].reduce((n, m) => n + Number(m[1]), 0);
    expect(delivered).toBe(workers.reduce((n, w) => n + w.emitted.length, 0));
  }, 30_000);

  it('a competing consumer draining a worker behind the relay shows as event-id gaps and event-queue-shared', async () => {
    const worker = await startSimWorkerServer('ctx0');
    cleanups.push(() => worker.close());
    const daemon = createDaemon(
      buildConfig(
        {
          web: { listen_address: '127.0.0.1:0' },
          relays: [{ id: 'ctx0', upstream: worker.url, listen: '127.0.0.1:0' }],
          relay: { drain_interval: '1s' },
        },
        {},
      ),
    );
    await daemon.start();
    cleanups.push(() => daemon.stop());
    const relay = `http://127.0.0.1:${daemon.relayAddress('ctx0')?.port}`;
    for (let i = 0; i < 12; i++) {
      const prompt = Array.from({ length: 40 }, (_, k) => 500 * i + k);
      const res = await request(`${relay}/v1/completions`, {
        method: 'POST',
        body: JSON.stringify({
          prompt,
          disaggregated_params: { request_type: 'context_only', disagg_request_id: i + 1 },
        }),
      });
      await res.body.text();
      // someone else (a second orchestrator that bypasses the relay) sends its own request to the worker directly
      // every other time and drains the worker's queue: the relay drains when its own requests complete, so what
      // it misses are the other orchestrator's events
      if (i % 2 === 0) {
        const own = Array.from({ length: 40 }, (_, k) => 90_000 + 500 * i + k);
        await (
          await request(`${worker.url}/v1/completions`, { method: 'POST', body: JSON.stringify({ prompt: own }) })
        ).body.text();
      }
      const thief = i % 2 === 0 ? worker.url : relay;
      await (await request(`${thief}/kv_cache_events`, { method: 'POST' })).body.text();
    }
    await eventually(() => daemon.snapshot().servers.some((s) => s.ranks.some((r) => r.gaps > 0)), 5_000, 'gaps');
    await eventually(
      () => daemon.snapshot().findings.some((f) => f.id === 'event-queue-shared'),
      10_000,
      'event-queue-shared',
    );
    const metrics = await (await request(`http://127.0.0.1:${daemon.webAddress().port}/metrics`)).body.text();
    expect(metrics).toContain('kvsentinel_finding_active{id="event-queue-shared",severity="critical"} 1');
    expect(metrics).toMatch(/kvsentinel_kv_event_gaps_total\{server="ctx0",rank="\d"\} [1-9]/);
  }, 30_000);
});
