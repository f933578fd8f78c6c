// The relay's request-body bounds: bodies over relay.max_request_bytes are refused with 413 and counted; the capture
// limit only stops reading the prompt, never forwarding.
import { Readable } from 'node:stream';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { parseKvEvents } from '../../src/core/wire/parse-kv-events.js';
import { silentLogger } from '../../src/sources/ports.js';
import { InflightTracker } from '../../src/sources/relay/inflight-tracker.js';
import { WorkerRelay, type RelayOptions, type RelayRejectReason } from '../../src/sources/relay/worker-relay.js';
import { SourceStatusBoard } from '../../src/sources/source-status.js';
import { startFakeCtxWorker, type FakeCtxWorker } from '../helpers/fake-ctx-worker.js';
import { RecordingSink, eventually } from '../helpers/recording-sink.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(options: Partial<RelayOptions>) {
  const sink = new RecordingSink();
  const status = new SourceStatusBoard({ sink, clock: Date.now });
  const worker: FakeCtxWorker = await startFakeCtxWorker();
  cleanups.push(() => worker.close());
  const rejected: [string, RelayRejectReason][] = [];
  const relay = new WorkerRelay(
    { id: 'ctx0', upstream: worker.url, host: '127.0.0.1', port: 0 },
    {
      sink,
      status,
      clock: Date.now,
      logger: silentLogger,
      inflight: new InflightTracker(),
      parseEvents: parseKvEvents,
      onRejected: (s, r) => rejected.push([s, r]),
    },
    { drainIntervalMs: 1_000, ...options },
  );
  await relay.start();
  cleanups.push(() => relay.stop());
  return { sink, worker, relay, rejected, base: `http://127.0.0.1:${relay.address().port}` };
}

/** A JSON body of exactly `bytes` bytes with a token-id prompt. */
function bodyOf(bytes: number): string {
  const head = '{"prompt":[1,2,3],"pad":"';
  return `${head}${'x'.repeat(bytes - head.length - 2)}"}`;
}

/** Sent chunked (no Content-Length), so only the streamed count can notice the size. */
function chunked(text: string, chunk = 4096): Readable {
  const parts: string[] = [];
  for (let i = 0; i < text.length; i += chunk) parts.push(text.slice(i, i + chunk));
  return Readable.from(parts);
}

describe('relay request body limit', () => {
  it('refuses a body whose Content-Length is over the limit with a 413 JSON error, without forwarding it', async () => {
    const { base, worker, relay, rejected, sink } = await setup({ maxRequestBytes: 1024 });
    const res = await request(`${base}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: bodyOf(4096),
    });
    expect(res.statusCode).toBe(413);
    expect(res.headers['content-type']).toBe('application/json');
    const json = (await res.body.json()) as { error: { message: string; type: string; code: number } };
    expect(json.error).toMatchObject({ type: 'request_too_large', code: 413 });
    expect(json.error.message).toContain('declares 4096 bytes');
    expect(json.error.message).toContain('relay.max_request_bytes');
    expect(relay.rejectedTooLarge).toBe(1);
    expect(rejected).toEqual([['ctx0', 'body_too_large']]);
    expect(worker.requests.filter((r) => r.path === '/v1/completions')).toHaveLength(0);
    // never forwarded: no routing observation either
    expect(sink.of('decision')).toHaveLength(0);
    expect(sink.of('outcome')).toHaveLength(0);
  });

  it('refuses a chunked body once it crosses the limit and aborts the upstream request', async () => {
    const { base, worker, relay, rejected, sink } = await setup({ maxRequestBytes: 16 * 1024 });
    const res = await request(`${base}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: chunked(bodyOf(64 * 1024)),
    });
    expect(res.statusCode).toBe(413);
    expect(((await res.body.json()) as { error: { message: string } }).error.message).toContain(
      `sent more than ${16 * 1024} bytes`,
    );
    expect(relay.rejectedTooLarge).toBe(1);
    expect(rejected).toHaveLength(1);
    await eventually(() => sink.of('outcome').length === 1, 2_000, 'outcome');
    expect(sink.of('outcome')[0]).toMatchObject({ server: 'ctx0', ok: false });
    // the worker never got a complete request
    expect(worker.requests.filter((r) => r.path === '/v1/completions')).toHaveLength(0);
  });

  it('forwards a body of exactly the limit, with and without Content-Length', async () => {
    const limit = 32 * 1024;
    const { base, worker, relay, sink } = await setup({ maxRequestBytes: limit });
    const body = bodyOf(limit);
    for (const sent of [body, chunked(body)]) {
      const res = await request(`${base}/v1/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: sent,
      });
      expect(res.statusCode).toBe(200);
      await res.body.text();
    }
    expect(worker.requests.filter((r) => r.path === '/v1/completions').map((r) => r.body)).toEqual([body, body]);
    expect(relay.rejectedTooLarge).toBe(0);
    await eventually(() => sink.of('decision').length === 2, 2_000, 'decisions');
    for (const d of sink.of('decision')) expect([...(d.promptTokens ?? [])]).toEqual([1, 2, 3]);
  });

  it('stops capturing past capture_max_bytes but forwards the whole body and still reads the usage', async () => {
    const { base, worker, sink } = await setup({ captureMaxBytes: 8 * 1024 });
    worker.cachedTokens = 7;
    const body = bodyOf(100 * 1024);
    const res = await request(`${base}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-correlation-id': 'c9' },
      body: chunked(body),
    });
    expect(res.statusCode).toBe(200);
    await res.body.text();
    expect(worker.requests.find((r) => r.path === '/v1/completions')?.body).toBe(body);
    await eventually(() => sink.of('outcome').length === 1, 2_000, 'outcome');
    // the prompt was not read (the capture is incomplete), the request was still observed
    expect(sink.of('decision')[0]).toMatchObject({ correlationId: 'c9', promptTokens: null, promptTokenCount: null });
    expect(sink.of('outcome')[0]).toMatchObject({ ok: true, cachedTokens: 7 });
  });

  it('reads several prompts through the text path (the scanner hands them over)', async () => {
    const { base, sink } = await setup({});
    const res = await request(`${base}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: chunked('{"prompt":[[5,6],[7]],"model":"m"}', 5),
    });
    await res.body.text();
    await eventually(() => sink.of('decision').length === 1, 2_000, 'decision');
    expect([...(sink.of('decision')[0]?.promptTokens ?? [])]).toEqual([5, 6]);
  });
});
