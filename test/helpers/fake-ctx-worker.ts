// A small stand-in for a trtllm-serve CTX worker on a real port: destructive POST /kv_cache_events with exact
// compact JSON (u64 hashes above 2^53), /v1/completions and /v1/chat/completions with usage (JSON or SSE),
// /server_info, and switchable faults (garbage, oversized, slow events; slow or held completions).
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

export type EventsFault = 'none' | 'garbage' | 'oversized' | 'slow' | 'http-500';

export interface FakeCtxWorker {
  readonly url: string;
  readonly port: number;
  /** every event ever put in the queue, as exact JSON text, in order */
  readonly emitted: string[];
  readonly requests: RecordedRequest[];
  /** POST /kv_cache_events calls */
  drains: number;
  eventsFault: EventsFault;
  /** cached_tokens the next completions report */
  cachedTokens: number;
  /** ms before a completion answers */
  completionDelayMs: number;
  /** resolves when a streaming request's client connection closed before the stream ended */
  readonly aborted: Promise<string>;
  /** emits events into the destructive queue */
  emit(items: readonly string[]): void;
  /** while set, SSE streams pause after their first chunk until release() */
  holdStreams: boolean;
  release(): void;
  close(): Promise<void>;
}

let hashCounter = 0n;

/** A `stored` event as TensorRT-LLM serializes it (compact, insertion-ordered keys), with hashes near 2^64. */
export function storedEventText(eventId: number, tokenBase: number, blocks = 2): string {
  const parts: string[] = [];
  for (let b = 0; b < blocks; b++) {
    hashCounter += 1n;
    const hash = 18_446_744_073_709_551_615n - hashCounter * 7_919n; // > 2^53, exact only as text
    const tokens = [0, 1, 2, 3]
      .map((k) => `{"type":"unique_token","token_id":${tokenBase + b * 4 + k},"token_extra_id":0}`)
      .join(',');
    parts.push(
      `{"type":"stored_block","block_hash":${hash},"tokens":[${tokens}],"cache_level":0,"priority":35,"mm_keys":[],"cache_salt":null}`,
    );
  }
  return `{"event_id":${eventId},"data":{"type":"stored","parent_hash":null,"blocks":[${parts.join(',')}]},"window_size":4096}`;
}

export function createdEventText(eventId: number): string {
  return `{"event_id":${eventId},"data":{"type":"created","num_blocks_per_cache_level":[8192,0]},"window_size":4096}`;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req as AsyncIterable<Buffer>) chunks.push(c);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startFakeCtxWorker(options: { autoEvents?: boolean } = {}): Promise<FakeCtxWorker> {
  const queue: string[] = [];
  let nextEventId = 0;
  let releaseHeld: () => void = () => undefined;
  let held = new Promise<void>((r) => (releaseHeld = r));
  let resolveAborted: (path: string) => void = () => undefined;
  const aborted = new Promise<string>((r) => (resolveAborted = r));

  const state: FakeCtxWorker = {
    url: '',
    port: 0,
    emitted: [],
    requests: [],
    drains: 0,
    eventsFault: 'none',
    cachedTokens: 0,
    completionDelayMs: 0,
    aborted,
    holdStreams: false,
    emit(items) {
      queue.push(...items);
      state.emitted.push(...items);
    },
    release() {
      releaseHeld();
      held = new Promise<void>((r) => (releaseHeld = r));
    },
    close: () => Promise.resolve(),
  };

  state.emit([createdEventText(nextEventId++)]);

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const body = await readBody(req);
    state.requests.push({ method: req.method ?? '', path, headers: req.headers, body });
    if (path === '/kv_cache_events' && req.method === 'POST') {
      state.drains++;
      const fault = state.eventsFault;
      if (fault === 'slow') await new Promise((r) => setTimeout(r, 2_000));
      if (fault === 'http-500') {
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"detail":"boom"}');
        return;
      }
      let text = `[${queue.splice(0).join(',')}]`;
      if (fault === 'garbage') text = '[{"event_id":1,"data":{"type":"stored",' + 'x'.repeat(10);
      if (fault === 'oversized') text = `[${Array.from({ length: 20_000 }, (_, i) => createdEventText(i)).join(',')}]`;
      res.writeHead(200, { 'content-type': 'application/json' }).end(text);
      return;
    }
    if (path === '/prometheus/metrics') {
      res
        .writeHead(200, { 'content-type': 'text/plain' })
        .end('# TYPE trtllm_kv_cache_hit_rate gauge\ntrtllm_kv_cache_hit_rate{model_name="m"} 0.5\n');
      return;
    }
    if (path === '/server_info') {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end('{"disaggregated_params":{},"kv_cache_hash_algo":"v1_block_key","tokens_per_block":4}');
      return;
    }
    if (path === '/v1/completions' || path === '/v1/chat/completions') {
      if (state.completionDelayMs > 0) await new Promise((r) => setTimeout(r, state.completionDelayMs));
      let parsed: { prompt?: unknown; stream?: boolean } = {};
      try {
        parsed = JSON.parse(body) as typeof parsed;
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"bad json"}');
        return;
      }
      const promptTokens = Array.isArray(parsed.prompt) ? parsed.prompt.length : 7;
      if (options.autoEvents !== false)
        state.emit([storedEventText(nextEventId++, Array.isArray(parsed.prompt) ? Number(parsed.prompt[0]) : 0)]);
      const usage = {
        prompt_tokens: promptTokens,
        completion_tokens: 1,
        total_tokens: promptTokens + 1,
        prompt_tokens_details: { cached_tokens: state.cachedTokens },
      };
      const echo = { 'x-echo-trace': String(req.headers['x-trace'] ?? '') };
      if (parsed.stream === true) {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...echo });
        res.on('close', () => {
          if (!res.writableFinished) resolveAborted(path);
        });
        res.write(`data: {"id":"c1","choices":[{"index":0,"text":"\\"prompt_tokens\\": 999"}]}\n\n`);
        if (state.holdStreams) await held;
        if (res.destroyed) return;
        res.write(`data: {"id":"c1","choices":[],"usage":${JSON.stringify(usage)}}\n\n`);
        res.end('data: [DONE]\n\n');
        return;
      }
      const text = JSON.stringify({ id: 'c1', object: 'text_completion', choices: [{ index: 0, text: 'ok' }], usage });
      res.writeHead(200, { 'content-type': 'application/json', ...echo }).end(text);
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  Object.assign(state, {
    url: `http://127.0.0.1:${port}`,
    port,
    close: async () => {
      releaseHeld();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  });
  return state;
}
