import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { Agent, request } from 'undici';
import { splitJsonArray } from '../../src/core/relay/split-json-array.js';
import { parseKvEvents } from '../../src/core/wire/parse-kv-events.js';
import { InflightTracker } from '../../src/sources/relay/inflight-tracker.js';
import { WorkerRelay, type ParseEvents, type RelayOptions } from '../../src/sources/relay/worker-relay.js';
import { SourceStatusBoard } from '../../src/sources/source-status.js';
import { silentLogger } from '../../src/sources/ports.js';
import { startFakeCtxWorker, storedEventText, type FakeCtxWorker } from '../helpers/fake-ctx-worker.js';
import { pollEvents, runFakeOrchestrator } from '../helpers/fake-orchestrator.js';
import { RecordingSink, eventually } from '../helpers/recording-sink.js';
import { cleanupsAfterEach } from '../helpers/test-resources.js';

const parseIds: ParseEvents = parseKvEvents;

const cleanups = cleanupsAfterEach();

async function setup(workers = 1, options: Partial<RelayOptions> = {}, replicaPorts = 0) {
  const sink = new RecordingSink();
  const status = new SourceStatusBoard({ sink, clock: Date.now });
  const inflight = new InflightTracker();
  const durations: number[] = [];
  const fakes: FakeCtxWorker[] = [];
  const relays: WorkerRelay[] = [];
  for (let i = 0; i < workers; i++) {
    const worker = await startFakeCtxWorker();
    fakes.push(worker);
    cleanups.push(() => worker.close());
    const relay = new WorkerRelay(
      {
        id: `ctx${i}`,
        upstream: worker.url,
        host: '127.0.0.1',
        port: 0,
        replicaPorts: Array.from({ length: replicaPorts }, () => 0),
      },
      {
        sink,
        status,
        clock: Date.now,
        logger: silentLogger,
        inflight,
        parseEvents: parseIds,
        onProxied: (_s, sec) => durations.push(sec),
      },
      { drainIntervalMs: 20, drainTimeoutMs: 500, ...options },
    );
    await relay.start();
    cleanups.push(() => relay.stop());
    relays.push(relay);
  }
  const bases = relays.map((r) => `http://127.0.0.1:${r.address().port}`);
  return { sink, status, inflight, fakes, relays, bases, durations };
}

describe('relay', () => {
  it('gives each consumer every event exactly once, in order, byte for byte (hashes above 2^53 intact)', async () => {
    const { fakes, bases, sink } = await setup(2);
    // events that exist before the router's first poll, and events emitted between requests
    fakes[0]?.emit([storedEventText(100, 5), storedEventText(101, 9)]);
    const a = await runFakeOrchestrator(bases, 12, { consumer: 'replica-a' });
    fakes[1]?.emit([storedEventText(200, 7)]);
    const b = await runFakeOrchestrator(bases, 6, { consumer: 'replica-b' });
    for (const [i, base] of bases.entries()) {
      a.received.get(base)?.push(...(await pollEvents(base, 'replica-a')));
      b.received.get(base)?.push(...(await pollEvents(base, 'replica-b')));
      const emitted = fakes[i]?.emitted ?? [];
      expect(emitted.length).toBeGreaterThan(5);
      expect(a.received.get(base)).toEqual(emitted);
      // replica-b joined after replica-a had read some events: it gets everything from its first poll on, in order
      const bItems = b.received.get(base) ?? [];
      expect(emitted.slice(emitted.length - bItems.length)).toEqual(bItems);
      expect(bItems.length).toBeGreaterThanOrEqual(3);
    }
    expect(a.statuses.every((s) => s === 200)).toBe(true);
    // a hash above 2^53 arrives with every digit
    expect(a.received.get(bases[0] as string)?.join(',')).toContain('"block_hash":18446744073709543696');
    const polls = sink.of('router-poll');
    expect(polls.filter((p) => p.consumer === 'replica-a')).toHaveLength(12 + 2);
    expect(polls.every((p) => p.dropped === 0)).toBe(true);
    // worker-events observations cover each server's seqs without holes
    for (const server of ['ctx0', 'ctx1']) {
      const obs = sink.of('worker-events').filter((o) => o.server === server);
      let next = 0;
      for (const o of obs) {
        expect(o.firstSeq).toBe(next);
        next += o.events.length;
      }
      expect(next).toBe(fakes[Number(server.slice(3))]?.emitted.length);
      const stored = obs.flatMap((o) => o.events).find((e) => e.data.type === 'stored');
      expect(stored?.data.type === 'stored' && typeof stored.data.blocks[0]?.blockHash === 'bigint').toBe(true);
    }
  });

  it('keeps exactly-once under concurrency: parallel requests, interleaved polls from two consumers', async () => {
    const { fakes, bases } = await setup(2, { drainIntervalMs: 5 });
    const got = new Map<string, string[]>();
    const key = (b: string, c: string): string => `${b}|${c}`;
    // one consumer polls serially (as a router does); different consumers and servers overlap freely
    const chains = new Map<string, Promise<void>>();
    const poll = (b: string, c: string): Promise<void> => {
      const next = (chains.get(key(b, c)) ?? Promise.resolve()).then(async () => {
        const items = await pollEvents(b, c);
        got.set(key(b, c), [...(got.get(key(b, c)) ?? []), ...items]);
      });
      chains.set(key(b, c), next);
      return next;
    };
    await Promise.all(bases.flatMap((b) => [poll(b, 'a'), poll(b, 'b')]));
    await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        const b = bases[i % 2] as string;
        const res = await request(`${b}/v1/completions`, { method: 'POST', body: `{"prompt":[${i},1,2]}` });
        await res.body.text();
        if (i % 3 === 0) fakes[i % 2]?.emit([storedEventText(1000 + i, i)]);
        await Promise.all([poll(b, 'a'), i % 2 === 0 ? poll(b, 'b') : Promise.resolve()]);
      }),
    );
    for (const [i, b] of bases.entries()) {
      await poll(b, 'a');
      await poll(b, 'b');
      expect(got.get(key(b, 'a'))).toEqual(fakes[i]?.emitted);
      expect(got.get(key(b, 'b'))).toEqual(fakes[i]?.emitted);
    }
  });

  it('makes each listen port one consumer: a client reconnecting from a new port before every poll gets each event once', async () => {
    const { fakes, bases, relays } = await setup(1);
    const base = bases[0] as string;
    const got: string[] = [];
    for (let i = 0; i < 8; i++) {
      fakes[0]?.emit([storedEventText(10 + i, i)]);
      // a fresh connection (new remote port) per poll, as aiohttp's pool with keepalive_timeout=1 does
      const agent = new Agent({ pipelining: 0 });
      const res = await request(`${base}/kv_cache_events`, { method: 'POST', dispatcher: agent });
      const split = splitJsonArray(await res.body.text());
      await agent.close();
      if (split.ok) got.push(...split.items);
    }
    expect(got).toEqual(fakes[0]?.emitted);
    expect(relays[0]?.bufferStats().consumers.map((c) => c.consumer)).toEqual([`port:${relays[0]?.address().port}`]);
    expect(relays[0]?.counters().eventsRedelivered).toBe(0);
  });

  it('gives two orchestrator replicas on their own relay ports every event once each', async () => {
    const { fakes, relays } = await setup(1, {}, 1);
    const [a, b] = (relays[0] as WorkerRelay).addresses().map((x) => `http://127.0.0.1:${x.port}`) as [string, string];
    const got = { a: [] as string[], b: [] as string[] };
    for (let i = 0; i < 6; i++) {
      fakes[0]?.emit([storedEventText(20 + i, i)]);
      got.a.push(...(await pollEvents(a)));
      if (i % 2 === 1) got.b.push(...(await pollEvents(b)));
    }
    got.b.push(...(await pollEvents(b)));
    expect(got.a).toEqual(fakes[0]?.emitted);
    expect(got.b).toEqual(fakes[0]?.emitted);
    expect(relays[0]?.counters().eventsRedelivered).toBe(0);
  });

  it('drains on its own interval, so events wait in the buffer (not the worker) for the router', async () => {
    const { fakes, relays } = await setup(1);
    fakes[0]?.emit([storedEventText(1, 1)]);
    await eventually(() => (relays[0]?.bufferStats().retainedEvents ?? 0) === 2, 2_000, 'interval drain');
    expect(fakes[0]?.drains).toBeGreaterThan(0);
  });

  it('proxies every path with headers kept and records decision and outcome of each CTX request', async () => {
    const { fakes, bases, sink, durations } = await setup(2);
    (fakes[0] as FakeCtxWorker).cachedTokens = 3;
    const body =
      '{"model":"m","prompt":[11,12,13,14,15],"disaggregated_params":{"request_type":"context_only","disagg_request_id":18446744073709551557,"conversation_id":"conv-7"}}';
    const res = await request(`${bases[0]}/v1/completions?x=1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-trace': 'abc' },
      body,
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-echo-trace']).toBe('abc');
    const json = (await res.body.json()) as { usage: { prompt_tokens_details: { cached_tokens: number } } };
    expect(json.usage.prompt_tokens_details.cached_tokens).toBe(3);
    const seen = fakes[0]?.requests.find((r) => r.path === '/v1/completions');
    expect(seen?.body).toBe(body);
    expect(seen?.headers['x-trace']).toBe('abc');

    const info = await request(`${bases[1]}/server_info`);
    expect(await info.body.text()).toContain('"kv_cache_hash_algo":"v1_block_key"');
    const missing = await request(`${bases[1]}/nope`);
    expect(missing.statusCode).toBe(404);
    await missing.body.text();

    await eventually(() => sink.of('outcome').length === 1, 2_000, 'outcome');
    const [decision] = sink.of('decision');
    expect(decision).toMatchObject({
      server: 'ctx0',
      requestId: '18446744073709551557',
      correlationId: 'conv-7',
      promptTokenCount: 5,
      inflight: { ctx0: 0, ctx1: 0 },
    });
    expect([...(decision?.promptTokens ?? [])]).toEqual([11, 12, 13, 14, 15]);
    expect(sink.of('outcome')[0]).toMatchObject({
      server: 'ctx0',
      requestId: '18446744073709551557',
      ok: true,
      promptTokens: 5,
      cachedTokens: 3,
    });
    expect(durations).toHaveLength(1);
  });

  it('forwards a request larger than relay.capture_max_bytes whole, keeps no copy of its prompt, and counts it', async () => {
    const { fakes, bases, sink, relays } = await setup(1, { captureMaxBytes: 64 });
    const body = `{"model":"m","prompt":[${Array.from({ length: 200 }, (_, i) => i + 1).join(',')}]}`;
    const res = await request(`${bases[0]}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(res.statusCode).toBe(200);
    await res.body.text();
    expect(fakes[0]?.requests.find((r) => r.path === '/v1/completions')?.body).toBe(body);
    await eventually(() => sink.of('outcome').length === 1, 2_000, 'outcome');
    expect(sink.of('decision')[0]).toMatchObject({ promptTokens: null, promptTokenCount: null });
    // the request copy and the response copy (bounded by the same 64 bytes here)
    expect(relays[0]?.counters().capturesTruncated).toBe(2);
  });

  it('streams SSE through as it is produced and reads the final usage', async () => {
    const { fakes, bases, sink } = await setup(1);
    const worker = fakes[0] as FakeCtxWorker;
    worker.cachedTokens = 64;
    worker.holdStreams = true;
    const res = await request(`${bases[0]}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-session-id': 'sess-1' },
      body: '{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true}',
    });
    expect(res.headers['content-type']).toBe('text/event-stream');
    const it = (res.body as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
    const first = await it.next();
    // the first chunk arrived while the worker still holds the rest of the stream
    expect(String(first.value)).toContain('"choices"');
    worker.release();
    let rest = '';
    for (let r = await it.next(); r.done !== true; r = await it.next()) rest += String(r.value);
    expect(rest).toContain('[DONE]');
    await eventually(() => sink.of('outcome').length === 1, 2_000, 'outcome');
    expect(sink.of('outcome')[0]).toMatchObject({ ok: true, promptTokens: 7, cachedTokens: 64 });
    expect(sink.of('decision')[0]).toMatchObject({
      correlationId: 'sess-1',
      promptTokens: null,
      promptTokenCount: null,
    });
  });

  it('forwards a large response byte for byte to a client that stalls and then reads (pause and resume upstream)', async () => {
    // 16 MB of blocks that each carry their offset: any lost, repeated or reordered chunk changes the digest. (Whether
    // the worker is held back cannot be asserted here: loopback receive buffers may grow to 32 MB each.)
    const big = Buffer.alloc(16 * 1024 * 1024);
    for (let i = 0; i < 4096; i++) big[i] = (i * 31) & 0xff;
    for (let at = 4096; at < big.length; at *= 2) big.copy(big, at, 0, at);
    for (let at = 0; at < big.length; at += 4096) big.writeUInt32BE(at, at);
    const upstream = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      let at = 0;
      const pump = (): void => {
        while (at < big.length) {
          const ok = res.write(big.subarray(at, at + 64 * 1024));
          at += 64 * 1024;
          if (!ok) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => upstream.close(() => resolve())));
    const sink = new RecordingSink();
    const relay = new WorkerRelay(
      {
        id: 'big',
        upstream: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`,
        host: '127.0.0.1',
        port: 0,
      },
      {
        sink,
        status: new SourceStatusBoard({ sink, clock: Date.now }),
        clock: Date.now,
        logger: silentLogger,
        inflight: new InflightTracker(),
        parseEvents: parseIds,
      },
      { drainIntervalMs: 60_000, shutdownGraceMs: 1_000 },
    );
    await relay.start();
    cleanups.push(() => relay.stop());
    const res = await request(`http://127.0.0.1:${relay.address().port}/big`);
    const it = (res.body as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
    const parts: Buffer[] = [];
    const first = await it.next();
    parts.push(first.value as Buffer);
    // the client stops reading for a while: the relay's writes to it back up
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (let r = await it.next(); r.done !== true; r = await it.next()) parts.push(r.value);
    const got = Buffer.concat(parts);
    expect(got.length).toBe(big.length);
    expect(createHash('sha256').update(got).digest('hex')).toBe(createHash('sha256').update(big).digest('hex'));
  });

  it('propagates a client abort upstream', async () => {
    const { fakes, bases, inflight } = await setup(1);
    const worker = fakes[0] as FakeCtxWorker;
    worker.holdStreams = true;
    const ac = new AbortController();
    const res = await request(`${bases[0]}/v1/completions`, {
      method: 'POST',
      body: '{"prompt":[1,2],"stream":true}',
      signal: ac.signal,
    });
    const it = (res.body as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
    await it.next();
    ac.abort();
    expect(await worker.aborted).toBe('/v1/completions');
    await eventually(() => inflight.get('ctx0') === 0, 2_000, 'inflight back to 0');
  });

  it('counts in-flight requests per server in each decision', async () => {
    const { fakes, bases, sink } = await setup(2);
    (fakes[0] as FakeCtxWorker).holdStreams = true;
    const held = await request(`${bases[0]}/v1/completions`, {
      method: 'POST',
      body: '{"prompt":[1,2],"stream":true}',
    });
    const it = (held.body as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
    await it.next();
    const second = await request(`${bases[1]}/v1/completions`, { method: 'POST', body: '{"prompt":[3,4]}' });
    await second.body.text();
    await eventually(() => sink.of('decision').length === 2, 2_000, 'decisions');
    expect(sink.of('decision').find((d) => d.server === 'ctx1')?.inflight).toEqual({ ctx0: 1, ctx1: 0 });
    fakes[0]?.release();
    for (let r = await it.next(); r.done !== true; r = await it.next());
  });

  it.each([
    ['garbage', 'parse'],
    ['oversized', 'oversized'],
    ['slow', 'timeout'],
    ['http-500', 'http_status'],
  ] as const)('reports %s events as a counted %s error and still answers polls', async (fault, reason) => {
    const { fakes, bases, status } = await setup(1, {
      maxDrainBytes: 100_000,
      drainTimeoutMs: 300,
      drainIntervalMs: 1_000,
    });
    const worker = fakes[0] as FakeCtxWorker;
    expect(await pollEvents(bases[0] as string)).toHaveLength(1); // the created event
    worker.eventsFault = fault;
    expect(await pollEvents(bases[0] as string)).toEqual([]);
    const s = status.list().find((x) => x.source === 'relay:ctx0');
    expect(s?.up).toBe(false);
    expect(s?.errors[reason]).toBeGreaterThan(0);
    worker.eventsFault = 'none';
    worker.emit([storedEventText(5, 5)]);
    expect(await pollEvents(bases[0] as string)).toHaveLength(1);
    expect(status.list().find((x) => x.source === 'relay:ctx0')?.up).toBe(true);
  });

  it('answers 502 for a killed worker and keeps serving polls from the buffer', async () => {
    const { fakes, bases, status, sink, relays } = await setup(1, { drainIntervalMs: 1_000 });
    await relays[0]?.drainNow();
    await fakes[0]?.close();
    const res = await request(`${bases[0]}/v1/completions`, { method: 'POST', body: '{"prompt":[1]}' });
    expect(res.statusCode).toBe(502);
    expect(await res.body.text()).toContain('kvsentinel relay');
    expect(await pollEvents(bases[0] as string)).toHaveLength(1); // drained before the kill
    const s = status.list().find((x) => x.source === 'relay:ctx0');
    expect(s).toMatchObject({ up: false });
    expect(s?.errors.connect).toBeGreaterThan(0);
    await eventually(() => sink.of('outcome').length === 1, 2_000, 'outcome');
    expect(sink.of('outcome')[0]).toMatchObject({ ok: false });
  });

  it('lets in-flight requests finish on stop and then refuses connections', async () => {
    const { fakes, bases, relays } = await setup(1);
    (fakes[0] as FakeCtxWorker).completionDelayMs = 200;
    const pending = request(`${bases[0]}/v1/completions`, { method: 'POST', body: '{"prompt":[1,2,3]}' });
    await eventually(
      () => fakes[0]?.requests.some((r) => r.path === '/v1/completions') ?? false,
      2_000,
      'request at the worker',
    );
    const stopped = relays[0]?.stop();
    const res = await pending;
    expect(res.statusCode).toBe(200);
    expect(await res.body.text()).toContain('"usage"');
    await stopped;
    await expect(request(`${bases[0]}/health`)).rejects.toThrow();
  });
});
