// trtllm-serve closes idle keep-alive sockets after 5 s (TIMEOUT_KEEP_ALIVE). The relay keeps idle upstream
// sockets for less than that, and a request whose connection is lost before any response byte is sent again on a
// fresh connection: the client never sees a 502 for it.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { parseKvEvents } from '../../src/core/wire/parse-kv-events.js';
import { InflightTracker } from '../../src/sources/relay/inflight-tracker.js';
import { WorkerRelay, type RelayOptions } from '../../src/sources/relay/worker-relay.js';
import { silentLogger } from '../../src/sources/ports.js';
import { SourceStatusBoard } from '../../src/sources/source-status.js';
import { RecordingSink, eventually } from '../helpers/recording-sink.js';
import { cleanupsAfterEach } from '../helpers/test-resources.js';

const cleanups = cleanupsAfterEach();

/**
 * A worker whose connections serve `perSocket` requests each and then drop the next one unanswered (the race of an
 * idle close meeting a reused socket, made deterministic) — once its body ended, or at its first body bytes with
 * `dropMidBody` — or close idle sockets after `keepAliveMs`.
 */
async function startWorker(options: { perSocket?: number; keepAliveMs?: number; dropMidBody?: boolean }) {
  const served = new Map<Socket, number>();
  const bodies: string[] = [];
  let dropped = 0;
  let connections = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    const overQuota = (): boolean =>
      options.perSocket !== undefined && (served.get(req.socket) ?? 0) >= options.perSocket;
    req.on('data', (c: Buffer) => {
      if (options.dropMidBody === true && overQuota() && !req.socket.destroyed) {
        dropped++;
        req.socket.destroy(); // the socket closes while the body is still arriving
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      if (req.url === '/kv_cache_events') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('[]');
        return;
      }
      const n = served.get(req.socket) ?? 0;
      if (overQuota()) {
        dropped++;
        req.socket.destroy(); // the socket closes under the request: no response byte
        return;
      }
      served.set(req.socket, n + 1);
      bodies.push(Buffer.concat(chunks).toString('utf8'));
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end('{"choices":[],"usage":{"prompt_tokens":3,"prompt_tokens_details":{"cached_tokens":0}}}');
    });
  });
  server.keepAliveTimeout = options.keepAliveMs ?? 60_000;
  server.on('connection', () => connections++);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.push(() => {
    server.closeAllConnections();
    return new Promise<void>((r) => server.close(() => r()));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bodies,
    get dropped() {
      return dropped;
    },
    get connections() {
      return connections;
    },
  };
}

async function relayTo(upstream: string, options: Partial<RelayOptions> = {}) {
  const sink = new RecordingSink();
  const relay = new WorkerRelay(
    { id: 'ctx0', upstream, host: '127.0.0.1', port: 0 },
    {
      sink,
      status: new SourceStatusBoard({ sink, clock: Date.now }),
      clock: Date.now,
      logger: silentLogger,
      inflight: new InflightTracker(),
      parseEvents: parseKvEvents,
    },
    { drainIntervalMs: 60_000, ...options },
  );
  await relay.start();
  cleanups.push(() => relay.stop());
  return { relay, sink, base: `http://127.0.0.1:${relay.address().port}` };
}

describe('relay upstream keep-alive', () => {
  it('sends a request again on a fresh connection when its reused one is lost before any response byte', async () => {
    const worker = await startWorker({ perSocket: 1 });
    const { relay, sink, base } = await relayTo(worker.url);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const body = JSON.stringify({ prompt: [i, 1, 2, 3] });
      const res = await request(`${base}/v1/completions`, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json' },
      });
      await res.body.text();
      statuses.push(res.statusCode);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200]);
    // every request reached the worker exactly once with its body intact
    expect(worker.bodies).toEqual(Array.from({ length: 6 }, (_, i) => JSON.stringify({ prompt: [i, 1, 2, 3] })));
    expect(worker.dropped).toBeGreaterThan(0);
    expect(relay.counters().upstreamRetries).toBe(worker.dropped);
    await eventually(() => sink.of('outcome').length === 6, 5000, 'the outcomes');
    expect(sink.of('outcome').every((o) => o.ok)).toBe(true);
  });

  it('sends the whole body again when the connection is lost while the client is still sending it', async () => {
    const worker = await startWorker({ perSocket: 1, dropMidBody: true });
    // no event drains: the second request must find the first one's connection idle
    const { relay, sink, base } = await relayTo(worker.url, { drainEvents: false });
    const first = await request(`${base}/v1/completions`, {
      method: 'POST',
      body: '{"prompt":[1,2]}',
      headers: { 'content-type': 'application/json' },
    });
    await first.body.text();
    // the second request reuses the connection; its body arrives in two parts, the second after the worker dropped it
    const body = new PassThrough();
    body.write('{"prompt":[7,8,');
    const pending = request(`${base}/v1/completions`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json' },
    });
    await eventually(() => worker.dropped === 1, 5000, 'the worker dropping the reused connection');
    body.end('9,10]}');
    const second = await pending;
    await second.body.text();
    expect(second.statusCode).toBe(200);
    expect(worker.bodies).toEqual(['{"prompt":[1,2]}', '{"prompt":[7,8,9,10]}']);
    expect(relay.counters().upstreamRetries).toBe(1);
    await eventually(() => sink.of('decision').length === 2, 5000, 'the decisions');
    expect(sink.of('decision')[1]?.promptTokens).toEqual(Uint32Array.from([7, 8, 9, 10]));
  });

  it('does not retry a request whose worker answered, and still answers 502 when the fresh connection fails too', async () => {
    const worker = await startWorker({ perSocket: 0 });
    const { relay, base } = await relayTo(worker.url);
    const res = await request(`${base}/v1/completions`, {
      method: 'POST',
      body: '{"prompt":[1,2]}',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.statusCode).toBe(502);
    await res.body.text();
    expect(relay.counters().upstreamRetries).toBe(1);
    expect(worker.dropped).toBe(2);
  });

  it('closes idle upstream sockets before a worker that closes them after its keep-alive: no request fails', async () => {
    // the worker's 5 s and the relay's 4 s, scaled down 10×
    const worker = await startWorker({ keepAliveMs: 500 });
    const { relay, base } = await relayTo(worker.url, { upstreamKeepAliveMs: 400 });
    const statuses: number[] = [];
    for (const gapMs of [0, 450, 20, 480, 10, 520, 0, 460]) {
      await new Promise((r) => setTimeout(r, gapMs));
      const res = await request(`${base}/v1/completions`, {
        method: 'POST',
        body: '{"prompt":[1,2,3]}',
        headers: { 'content-type': 'application/json' },
      });
      await res.body.text();
      statuses.push(res.statusCode);
    }
    expect(statuses.every((s) => s === 200)).toBe(true);
    // idle gaps over 400 ms opened a new connection (the relay let the old one go first), with no retry needed
    expect(worker.connections).toBeGreaterThanOrEqual(4);
    expect(relay.counters().upstreamRetries).toBe(0);
  });
});
