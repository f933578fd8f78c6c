// Fault injection through the whole daemon (relay ports, state, exporter) for the faults the existing tests do not
// reach: hashes written as floats or negative numbers inside an otherwise good drain, event_id gaps and a reset
// (worker restart), HTTP 5xx and a slow (timed-out) drain, and a router whose debug endpoint does not exist. A
// healthy second worker runs beside the faulty one: its data must be complete whatever happens to the first.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { buildConfig } from '../../src/app/config/serve-config.js';
import { createDaemon } from '../../src/app/daemon/daemon.js';
import { startFakeCtxWorker, storedEventText, type FakeCtxWorker } from '../helpers/fake-ctx-worker.js';
import { pollEvents, runFakeOrchestrator } from '../helpers/fake-orchestrator.js';
import { promtoolProblems } from '../helpers/promtool.js';
import { eventually } from '../helpers/recording-sink.js';
import { cleanupsAfterEach, readUntil } from '../helpers/test-resources.js';

const cleanups = cleanupsAfterEach();

const removed = (id: number, hash: string): string =>
  `{"event_id":${id},"data":{"type":"removed","block_hashes":[${hash}]},"window_size":4096}`;
const created = (id: number): string =>
  `{"event_id":${id},"data":{"type":"created","num_blocks_per_cache_level":[8192,0]},"window_size":4096}`;

type Drain = { readonly body: string } | { readonly status: number } | { readonly delayMs: number };

/** A worker whose drains answer from a script (then `[]`); server_info and metrics are healthy. */
async function scriptedWorker(script: Drain[]): Promise<{ url: string; script: Drain[] }> {
  const server: Server = createServer((req, res) => {
    req.resume();
    const path = (req.url ?? '/').split('?')[0];
    void (async () => {
      if (path === '/kv_cache_events') {
        const d = script.shift() ?? { body: '[]' };
        if ('status' in d) return void res.writeHead(d.status).end('{"detail":"internal error"}');
        if ('delayMs' in d) await new Promise((r) => setTimeout(r, d.delayMs));
        return void res.writeHead(200, { 'content-type': 'application/json' }).end('body' in d ? d.body : '[]');
      }
      if (path === '/server_info')
        return void res.writeHead(200).end('{"kv_cache_hash_algo":"v1_block_key","tokens_per_block":4}');
      res.writeHead(404).end('not found');
    })();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.push(() => {
    server.closeAllConnections();
    return new Promise((r) => server.close(() => r()));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, script };
}

async function metricsOf(base: string): Promise<string> {
  const res = await request(`${base}/metrics`);
  return res.body.text();
}

/** Scrapes until `ok` holds (one scrape at a time: none is left in flight when the test stops the daemon). */
const metricsWhen = (base: string, ok: (metrics: string) => boolean, what: string): Promise<string> =>
  readUntil(() => metricsOf(base), ok, what);

const valueOf = (metrics: string, series: string): number => {
  const line = metrics.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
};

/** A daemon started on free ports from a configuration file's content (stopped after the test). */
async function startedDaemon(file: unknown): Promise<{ base: string; relay: (id: string) => string }> {
  const daemon = createDaemon(buildConfig(file, {}));
  await daemon.start();
  cleanups.push(() => daemon.stop());
  const web = daemon.webAddress();
  return {
    base: `http://${web.host}:${web.port}`,
    relay: (id) => `http://127.0.0.1:${daemon.relayAddress(id)?.port}`,
  };
}

describe('daemon under injected faults', () => {
  it('float and negative hashes, id gaps, a reset, 5xx, a slow drain, a missing router debug endpoint: all counted, nothing else lost', async () => {
    const good = [created(0), removed(1, '18446744073709551615'), removed(2, '9007199254740993')];
    const mixed = [removed(3, '1.5'), removed(4, '-5'), removed(5, '12345678901234567890')];
    const afterGap = [removed(9, '42')];
    const restarted = [created(0), removed(1, '7')];
    const faulty = await scriptedWorker([
      { body: `[${good.join(',')}]` },
      { body: `[${mixed.join(',')}]` },
      { body: `[${afterGap.join(',')}]` },
      { status: 503 },
      { delayMs: 600 },
      { body: `[${restarted.join(',')}]` },
    ]);
    const healthy: FakeCtxWorker = await startFakeCtxWorker();
    cleanups.push(() => healthy.close());
    const noDebug = await scriptedWorker([]); // answers 404 for /debug/...
    const { base, relay } = await startedDaemon({
      web: { listen_address: '127.0.0.1:0' },
      relays: [
        { id: 'ctx0', upstream: faulty.url, listen: '127.0.0.1:0' },
        { id: 'ctx1', upstream: healthy.url, listen: '127.0.0.1:0' },
      ],
      relay: { drain_interval: '40ms', drain_timeout: '300ms' },
      router_debug: { url: noDebug.url, interval: '50ms' },
      server_info_interval: '200ms',
      timeout: '300ms',
    });

    await eventually(() => faulty.script.length === 0, 8_000, 'every scripted drain served');
    const run = await runFakeOrchestrator([relay('ctx1')], 6, { consumer: 'router' });
    expect(run.statuses.every((s) => s === 200)).toBe(true);

    // the router gets every item the faulty worker handed over, bad ones included, byte for byte and in order
    expect(await pollEvents(relay('ctx0'), 'router')).toEqual([...good, ...mixed, ...afterGap, ...restarted]);
    // the healthy worker's stream is complete
    const healthyGot = [...(run.received.get(relay('ctx1')) ?? []), ...(await pollEvents(relay('ctx1'), 'router'))];
    expect(healthyGot).toEqual(healthy.emitted);

    const m = await metricsWhen(
      base,
      (t) =>
        valueOf(t, 'kvsentinel_kv_event_stream_resets_total{server="ctx0",rank="0"}') >= 1 &&
        valueOf(t, 'kvsentinel_up{source="router-debug"}') === 0 &&
        t.includes('reason="timeout"'),
      'fault counters in /metrics',
    );
    expect(valueOf(m, 'kvsentinel_bad_input_total{source="relay:ctx0",code="hash-float"}')).toBe(1);
    expect(valueOf(m, 'kvsentinel_bad_input_total{source="relay:ctx0",code="hash-negative"}')).toBe(1);
    expect(valueOf(m, 'kvsentinel_kv_event_gaps_total{server="ctx0",rank="0"}')).toBeGreaterThanOrEqual(1);
    expect(valueOf(m, 'kvsentinel_kv_events_missed_total{server="ctx0",rank="0"}')).toBeGreaterThanOrEqual(3);
    expect(
      valueOf(m, 'kvsentinel_source_errors_total{source="relay:ctx0",reason="http_status"}'),
    ).toBeGreaterThanOrEqual(1);
    expect(valueOf(m, 'kvsentinel_source_errors_total{source="relay:ctx0",reason="timeout"}')).toBeGreaterThanOrEqual(
      1,
    );
    expect(
      valueOf(m, 'kvsentinel_source_errors_total{source="router-debug",reason="http_status"}'),
    ).toBeGreaterThanOrEqual(1);
    // good events of the faulty worker were applied: the valid removal after the bad ones, and both created
    expect(valueOf(m, 'kvsentinel_kv_events_total{server="ctx0",rank="0",type="created"}')).toBe(2);
    expect(valueOf(m, 'kvsentinel_kv_events_total{server="ctx0",rank="0",type="removed"}')).toBe(
      good.length - 1 + 1 + afterGap.length + 1,
    );
    // the faulty worker recovered: up again; the healthy one never went down
    expect(valueOf(m, 'kvsentinel_up{source="relay:ctx0"}')).toBe(1);
    expect(valueOf(m, 'kvsentinel_up{source="relay:ctx1"}')).toBe(1);
    expect(valueOf(m, 'kvsentinel_source_errors_total{source="relay:ctx1",reason="http_status"}')).toBe(0);
    expect(valueOf(m, 'kvsentinel_requests_total{server="ctx1"}')).toBe(6);
    expect(promtoolProblems(m).problems).toEqual([]);
    expect((await request(`${base}/-/healthy`)).statusCode).toBe(200);
  }, 20_000);

  it('a router hanging up on a slow drain, consumers past relay.max_consumers and a full block table: counted in /metrics', async () => {
    // drain 1 at start-up: 3 stored blocks into a table capped at 2; drain 2 (for the router's poll) is slow
    const stored = storedEventText(0, 100, 3);
    const worker = await scriptedWorker([{ body: `[${stored}]` }, { delayMs: 1_500, body: `[${removed(1, '5')}]` }]);
    const daemon = await startedDaemon({
      web: { listen_address: '127.0.0.1:0' },
      relays: [{ id: 'ctx0', upstream: worker.url, listen: '127.0.0.1:0' }],
      relay: { drain_interval: '1h', drain_timeout: '5s', max_consumers: 2 },
      state: { max_table_blocks: 2 },
      server_info_interval: '1h',
    });
    const base = daemon.base;
    const relay = daemon.relay('ctx0');
    await eventually(() => worker.script.length === 1, 5_000, 'the start-up drain');

    // the router's poll times out while the worker is slow: it hangs up
    const poll = request(`${relay}/kv_cache_events`, {
      method: 'POST',
      headers: { 'x-kvsentinel-consumer': 'router' },
      signal: AbortSignal.timeout(200),
    });
    await expect(poll).rejects.toThrow();
    await metricsWhen(
      base,
      (t) => valueOf(t, 'kvsentinel_relay_abandoned_polls_total{server="ctx0"}') === 1,
      'the abandoned poll in /metrics',
    );
    // nothing was lost to it: its next poll gets both drains' events, once
    expect(await pollEvents(relay, 'router')).toEqual([stored, removed(1, '5')]);
    expect(await pollEvents(relay, 'router')).toEqual([]);

    // two strangers past max_consumers: 2 — the longest silent ones are forgotten, counted
    for (const stranger of ['a', 'b', 'c']) await pollEvents(relay, stranger);
    const m = await metricsWhen(
      base,
      (t) => valueOf(t, 'kvsentinel_cache_dropped_total{cache="relay_consumers",reason="cap"}') === 2,
      'the consumer bound in /metrics',
    );
    expect(valueOf(m, 'kvsentinel_table_blocks_evicted_total{server="ctx0",table="worker"}')).toBe(1);
    expect(valueOf(m, 'kvsentinel_worker_table_blocks{server="ctx0",rank="0",cache_level="0"}')).toBe(2);
    expect(valueOf(m, 'kvsentinel_cache_dropped_total{cache="relay_consumers",reason="idle"}')).toBe(0);
    expect(m).toContain('kvsentinel_cache_dropped_total{cache="trajectories",reason="cap"} 0');
    expect(promtoolProblems(m).problems).toEqual([]);
  }, 20_000);

  it("the relays share one read history: past relay.retain_read_bytes a relay's read events go early, counted", async () => {
    const events = Array.from({ length: 10 }, (_, i) => removed(i, String(1_000 + i)));
    const busy = await scriptedWorker([{ body: `[${events.join(',')}]` }]);
    const quiet = await scriptedWorker([]);
    const daemon = await startedDaemon({
      web: { listen_address: '127.0.0.1:0' },
      relays: [
        { id: 'ctx0', upstream: busy.url, listen: '127.0.0.1:0' },
        { id: 'ctx1', upstream: quiet.url, listen: '127.0.0.1:0' },
      ],
      // 10 s of read history, but 400 bytes for both relays: 200 each, about two of these events
      relay: { drain_interval: '1h', retain_read: '10s', retain_read_bytes: 400 },
      server_info_interval: '1h',
    });
    const base = daemon.base;
    const relay = daemon.relay('ctx0');
    await eventually(() => busy.script.length === 0, 5_000, 'the start-up drain');
    expect(await pollEvents(relay, 'router')).toEqual(events);
    // a replica joining a moment later gets what the budget kept of the history: the newest events, in order
    const kept = await pollEvents(relay, 'replica');
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(events.length);
    expect(kept).toEqual(events.slice(events.length - kept.length));
    const m = await metricsWhen(
      base,
      (t) => valueOf(t, 'kvsentinel_cache_dropped_total{cache="relay_read_history",reason="budget"}') > 0,
      'the read-history budget in /metrics',
    );
    expect(valueOf(m, 'kvsentinel_cache_dropped_total{cache="relay_read_history",reason="budget"}')).toBe(
      events.length - kept.length,
    );
    // released after everyone read them: no consumer lost an event
    expect(m).toContain('kvsentinel_relay_events_dropped_total{server="ctx0"} 0\n');
    expect(promtoolProblems(m).problems).toEqual([]);
  }, 20_000);
});
