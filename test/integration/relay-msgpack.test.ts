// The relay reads what the newest TensorRT-LLM orchestrator sends (msgpack bodies flagged X-TRTLLM-Msgpack: 1, no
// X-Correlation-ID) and what its workers answer (prompt_token_ids, or prompt_token_ids_b64 when asked), forwards
// every byte unchanged, and counts what it cannot read instead of going silently blind.
import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { decode, encode } from '@msgpack/msgpack';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import type { RequestUnreadableReason } from '../../src/core/relay/request-unreadable.js';
import { parseKvEvents } from '../../src/core/wire/parse-kv-events.js';
import { InflightTracker } from '../../src/sources/relay/inflight-tracker.js';
import { WorkerRelay } from '../../src/sources/relay/worker-relay.js';
import { silentLogger } from '../../src/sources/ports.js';
import { SourceStatusBoard } from '../../src/sources/source-status.js';
import { RecordingSink, eventually } from '../helpers/recording-sink.js';
import { cleanupsAfterEach } from '../helpers/test-resources.js';

const cleanups = cleanupsAfterEach();

interface Seen {
  readonly headers: IncomingMessage['headers'];
  readonly body: Buffer;
}

/** A context worker that records raw completion bodies and answers with the prompt ids as TensorRT-LLM does. */
async function startWorker(): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (req.url === '/kv_cache_events') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('[]');
        return;
      }
      seen.push({ headers: req.headers, body });
      let value: Record<string, unknown> = {};
      try {
        value = (
          req.headers['x-trtllm-msgpack'] === '1'
            ? decode(body, { useBigInt64: true })
            : JSON.parse(body.toString('utf8'))
        ) as Record<string, unknown>;
      } catch {
        // unreadable here too: answer without ids
      }
      const ids = Array.isArray(value['prompt']) ? (value['prompt'] as number[]).map(Number) : [11, 12, 13, 14];
      const disagg = (value['disaggregated_params'] ?? {}) as Record<string, unknown>;
      const out: Record<string, unknown> = {
        id: 'chatcmpl-1',
        choices: [
          {
            index: 0,
            finish_reason: 'length',
            disaggregated_params: { request_type: 'context_only', ctx_request_id: 1 },
          },
        ],
        usage: {
          prompt_tokens: ids.length,
          completion_tokens: 1,
          total_tokens: ids.length + 1,
          prompt_tokens_details: { cached_tokens: 2 },
        },
      };
      if (disagg['return_prompt_token_ids_b64'] === true) {
        const bytes = Buffer.alloc(ids.length * 4);
        ids.forEach((id, i) => bytes.writeInt32LE(id, i * 4));
        out['prompt_token_ids'] = null;
        out['prompt_token_ids_b64'] = bytes.toString('base64');
      } else out['prompt_token_ids'] = ids;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(out));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

async function setup() {
  const worker = await startWorker();
  const sink = new RecordingSink();
  const status = new SourceStatusBoard({ sink, clock: Date.now });
  const unreadable: [string, RequestUnreadableReason][] = [];
  const relay = new WorkerRelay(
    { id: 'ctx0', upstream: worker.url, host: '127.0.0.1', port: 0 },
    {
      sink,
      status,
      clock: Date.now,
      logger: silentLogger,
      inflight: new InflightTracker(),
      parseEvents: parseKvEvents,
      onUnreadable: (s, r) => unreadable.push([s, r]),
    },
    { drainIntervalMs: 1000 },
  );
  await relay.start();
  cleanups.push(() => relay.stop());
  return { worker, sink, relay, unreadable, base: `http://127.0.0.1:${relay.address().port}` };
}

async function post(
  base: string,
  path: string,
  body: Uint8Array | string,
  headers: Record<string, string>,
): Promise<string> {
  const res = await request(`${base}${path}`, { method: 'POST', body, headers });
  const text = await res.body.text();
  expect(res.statusCode).toBe(200);
  return text;
}

describe('relay: msgpack bodies and worker token ids', () => {
  it('reads a msgpack body without X-Correlation-ID, forwards it byte for byte, and takes the b64 worker ids', async () => {
    const { worker, sink, base } = await setup();
    const prompt = Array.from({ length: 300 }, (_, i) => (i * 7919) % 129_280);
    const body = encode(
      {
        model: 'm',
        prompt,
        stream: false,
        disaggregated_params: {
          request_type: 'context_only',
          disagg_request_id: 9_223_372_036_854_775_809n,
          conversation_id: 'conv-7',
          return_prompt_token_ids_b64: true,
        },
      },
      { useBigInt64: true },
    );
    await post(base, '/v1/completions', body, { 'content-type': 'application/json', 'x-trtllm-msgpack': '1' });
    expect(Buffer.compare(worker.seen[0]!.body, Buffer.from(body))).toBe(0);
    expect(worker.seen[0]!.headers['x-trtllm-msgpack']).toBe('1');
    await eventually(() => sink.of('outcome').length === 1, 5000, 'the outcome');
    const [decision] = sink.of('decision');
    expect(decision).toMatchObject({
      requestId: '9223372036854775809',
      correlationId: 'conv-7',
      promptTokenCount: 300,
      promptForm: 'token-ids',
      unreadable: null,
    });
    expect([...(decision!.promptTokens ?? [])]).toEqual(prompt);
    const [outcome] = sink.of('outcome');
    expect(outcome).toMatchObject({ requestId: '9223372036854775809', promptTokens: 300, cachedTokens: 2 });
    expect([...(outcome!.workerPromptTokens ?? [])]).toEqual(prompt);
  });

  it('takes the worker ids of a chat request (prompt_token_ids list) and names its prompt form', async () => {
    const { sink, base } = await setup();
    const chat = {
      model: 'm',
      messages: [{ role: 'user', content: 'hello' }],
      disaggregated_params: { request_type: 'context_only', disagg_request_id: 5, conversation_id: 'c' },
    };
    await post(base, '/v1/chat/completions', JSON.stringify(chat), { 'content-type': 'application/json' });
    await post(base, '/v1/chat/completions', encode(chat), {
      'content-type': 'application/json',
      'x-trtllm-msgpack': '1',
    });
    await eventually(() => sink.of('outcome').length === 2, 5000, 'the outcomes');
    for (const d of sink.of('decision'))
      expect(d).toMatchObject({
        promptForm: 'chat',
        promptTokens: null,
        unreadable: null,
        correlationId: 'c',
        requestId: '5',
      });
    for (const o of sink.of('outcome')) expect([...(o.workerPromptTokens ?? [])]).toEqual([11, 12, 13, 14]);
  });

  it('counts requests it cannot read, per reason, and still forwards them', async () => {
    const { worker, sink, relay, unreadable, base } = await setup();
    const gz = gzipSync(Buffer.from('{"prompt":[1,2,3]}'));
    await post(base, '/v1/completions', gz, {
      'content-type': 'application/json',
      'content-encoding': 'gzip',
      'x-correlation-id': 'g',
    });
    await post(base, '/v1/completions', Uint8Array.from([0xc1, 0x00]), {
      'content-type': 'application/json',
      'x-trtllm-msgpack': '1',
    });
    await post(base, '/v1/completions', '{"model":"m"}', { 'content-type': 'application/json' });
    await eventually(() => sink.of('outcome').length === 3, 5000, 'the outcomes');
    expect(Buffer.compare(worker.seen[0]!.body, gz)).toBe(0);
    expect(sink.of('decision').map((d) => d.unreadable)).toEqual(['unknown_encoding', 'malformed', 'no_prompt']);
    expect(sink.of('decision')[0]?.correlationId).toBe('g');
    expect(unreadable).toEqual([
      ['ctx0', 'unknown_encoding'],
      ['ctx0', 'malformed'],
      ['ctx0', 'no_prompt'],
    ]);
    expect(Object.fromEntries(relay.unreadableRequests())).toEqual({ unknown_encoding: 1, malformed: 1, no_prompt: 1 });
  });

  it('counts a body over capture_max_bytes as too_large and forwards it whole', async () => {
    const worker = await startWorker();
    const sink = new RecordingSink();
    const relay = new WorkerRelay(
      { id: 'ctx0', upstream: worker.url, host: '127.0.0.1', port: 0 },
      {
        sink,
        status: new SourceStatusBoard({ sink, clock: Date.now }),
        clock: Date.now,
        logger: silentLogger,
        inflight: new InflightTracker(),
        parseEvents: parseKvEvents,
      },
      { drainIntervalMs: 1000, captureMaxBytes: 1024 },
    );
    await relay.start();
    cleanups.push(() => relay.stop());
    const body = JSON.stringify({ prompt: Array.from({ length: 2000 }, (_, i) => i) });
    await post(`http://127.0.0.1:${relay.address().port}`, '/v1/completions', body, {
      'content-type': 'application/json',
    });
    await eventually(() => sink.of('decision').length === 1, 5000, 'the decision');
    expect(sink.of('decision')[0]?.unreadable).toBe('too_large');
    expect(worker.seen[0]?.body.toString('utf8')).toBe(body);
  });
});
