import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createServerResolver } from '../../src/core/watch/server-resolver.js';
import { parseKvEvents } from '../../src/core/wire/parse-kv-events.js';
import type { Logger } from '../../src/sources/ports.js';
import { SourceStatusBoard } from '../../src/sources/source-status.js';
import { createExclusiveEventsSource } from '../../src/sources/watch/exclusive-events-source.js';
import { createPrometheusScrapeSource } from '../../src/sources/watch/prometheus-scrape-source.js';
import { createRouterDebugSource } from '../../src/sources/watch/router-debug-source.js';
import { createServerInfoSource } from '../../src/sources/watch/server-info-source.js';
import { startFakeCtxWorker, storedEventText } from '../helpers/fake-ctx-worker.js';
import { pollEvents } from '../helpers/fake-orchestrator.js';
import { RecordingSink } from '../helpers/recording-sink.js';
import { cleanupsAfterEach } from '../helpers/test-resources.js';

const cleanups = cleanupsAfterEach();

function deps() {
  const sink = new RecordingSink();
  const status = new SourceStatusBoard({ sink, clock: Date.now });
  const warnings: string[] = [];
  const logger: Logger = { info: () => undefined, warn: (m) => warnings.push(m), error: (m) => warnings.push(m) };
  return { sink, status, logger, warnings, clock: Date.now };
}

const slow = { intervalMs: 1_000_000, timeoutMs: 500, maxBytes: 1_000_000 };

describe('watch sources over real HTTP', () => {
  it('exclusive mode drains events in order and warns loudly on event-id gaps (someone else drained)', async () => {
    const worker = await startFakeCtxWorker();
    cleanups.push(() => worker.close());
    const d = deps();
    const source = createExclusiveEventsSource(
      { ...d, parseEvents: parseKvEvents },
      { server: 'ctx0', url: worker.url, ...slow },
    );
    cleanups.push(() => source.stop());
    worker.emit([storedEventText(1, 1)]);
    await source.pollNow();
    expect(d.sink.of('worker-events').flatMap((o) => o.events.map((e) => e.eventId))).toEqual([0, 1]);
    expect(d.warnings).toEqual([]);
    worker.emit([storedEventText(2, 2), storedEventText(3, 3)]);
    await pollEvents(worker.url); // a competing consumer (a router) steals 2 and 3
    worker.emit([storedEventText(4, 4)]);
    await source.pollNow();
    expect(d.warnings[0]).toMatch(/ctx0 rank 0 event_id jumped 1 -> 4: 2 events were consumed by someone else/);
    const obs = d.sink.of('worker-events');
    expect(obs.map((o) => o.firstSeq)).toEqual([0, 2]);
    expect(d.status.list().find((s) => s.source === 'events:ctx0')?.up).toBe(true);
  });

  it('server info: algorithm and block size; prometheus probe: up, then a counted error when the worker is gone', async () => {
    const worker = await startFakeCtxWorker();
    const d = deps();
    const info = createServerInfoSource(d, { server: 'ctx0', url: worker.url, ...slow });
    const prom = createPrometheusScrapeSource(d, { server: 'ctx0', url: worker.url, ...slow });
    cleanups.push(
      () => info.stop(),
      () => prom.stop(),
    );
    await info.pollNow();
    await prom.pollNow();
    expect(d.sink.of('server-info')[0]).toMatchObject({ server: 'ctx0', hashAlgo: 'v1_block_key', tokensPerBlock: 4 });
    expect(d.status.list().find((s) => s.source === 'prometheus:ctx0')?.up).toBe(true);
    await worker.close();
    await prom.pollNow();
    expect(d.status.list().find((s) => s.source === 'prometheus:ctx0')).toMatchObject({
      up: false,
      errors: { connect: 1 },
    });
  });

  it('router debug: polls with since=<last seq>, applies each decision once, survives garbage', async () => {
    const seen: string[] = [];
    let body = '';
    const server: Server = createServer((req, res) => {
      seen.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    cleanups.push(() => new Promise((r) => server.close(() => r())));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const d = deps();
    const source = createRouterDebugSource(
      { ...d, resolve: createServerResolver({ ctx0: [':9401'] }) },
      { url: base, ...slow },
    );
    cleanups.push(() => source.stop());
    const decision = (seq: number): string =>
      `{"seq":${seq},"ts":1700000000,"request_id":"r${seq}","correlation_id":null,"chosen":"h:9401","candidates":[]}`;
    body = `{"router":{"type":"kv_cache_aware","tokens_per_block":32,"max_batch_size":64},"servers":[{"url":"h:9401","block_table_size":0}],"decisions":[${decision(1)},${decision(2)}]}`;
    await source.pollNow();
    body = `{"servers":[],"decisions":[${decision(2)},${decision(3)}]}`; // a router that ignores since
    await source.pollNow();
    expect(seen).toEqual(['/debug/router', '/debug/router?since=2']);
    expect(d.sink.of('router-score').map((o) => o.seq)).toEqual([1, 2, 3]);
    expect(d.sink.of('router-state')[0]).toMatchObject({ server: 'ctx0', blockTableSize: 0 });
    body = 'garbage';
    await source.pollNow();
    expect(d.status.list().find((s) => s.source === 'router-debug')).toMatchObject({ up: false, errors: { parse: 1 } });
  });
});
