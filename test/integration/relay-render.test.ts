// The relay with the model's tokenizer (DeepSeek-V3): text and chat requests, JSON or msgpack, get the router-side
// ids the router would hash (decision promptTokens, promptTokensFrom 'tokenizer'), and each response's worker ids
// are compared with them (render-check). The worker here tokenizes with the same real tokenizer, correctly or with
// one of the faults real deployments show.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decode, encode } from '@msgpack/msgpack';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { renderInputOf } from '../../src/core/render/render-input.js';
import { parseKvEvents } from '../../src/core/wire/parse-kv-events.js';
import { InflightTracker } from '../../src/sources/relay/inflight-tracker.js';
import { WorkerRelay } from '../../src/sources/relay/worker-relay.js';
import { silentLogger } from '../../src/sources/ports.js';
import { SourceStatusBoard } from '../../src/sources/source-status.js';
import { ModelTokenizer } from '../../src/sources/tokenizer/model-tokenizer.js';
import { RenderPool } from '../../src/sources/tokenizer/render-pool.js';
import { DEEPSEEK_V3_DIR, deepseekVariant } from '../helpers/model-tokenizers.js';
import { TOOLS_TEMPLATE } from '../render/conversations.js';
import { RecordingSink, eventually } from '../helpers/recording-sink.js';
import { cleanupsAfterEach } from '../helpers/test-resources.js';

const cleanups = cleanupsAfterEach();
const tokenizer = ModelTokenizer.load(DEEPSEEK_V3_DIR);

type WorkerRender = 'same' | 'doubled-bos' | 'no-generation-prompt';

/** A context worker that tokenizes the prompt itself (trtllm-serve's own render) and returns its prompt_token_ids. */
async function startWorker(mode: WorkerRender): Promise<string> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        if (req.url === '/kv_cache_events') {
          res.writeHead(200, { 'content-type': 'application/json' }).end('[]');
          return;
        }
        const raw = Buffer.concat(chunks);
        const body = (
          req.headers['x-trtllm-msgpack'] === '1' ? decode(raw) : JSON.parse(raw.toString('utf8'))
        ) as Record<string, unknown>;
        const input = renderInputOf(body);
        let ids: Uint32Array;
        if (input === null) ids = Uint32Array.from((body['prompt_token_ids'] ?? body['prompt']) as number[]);
        else if (input.kind === 'text') ids = await tokenizer.encodeText(input.prompt);
        else if (mode === 'doubled-bos') ids = await tokenizer.encodeText(tokenizer.renderChat(input));
        else
          ids = await tokenizer.render(
            mode === 'no-generation-prompt' ? { ...input, addGenerationPrompt: false } : input,
          );
        const out = {
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
            prompt_tokens_details: { cached_tokens: 0 },
          },
          prompt_token_ids: [...ids],
        };
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(out));
      })();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function setup(mode: WorkerRender = 'same', relayTokenizer: ModelTokenizer = tokenizer) {
  const upstream = await startWorker(mode);
  const sink = new RecordingSink();
  const renders: string[] = [];
  const render = new RenderPool({ tokenizer: relayTokenizer, thread: false });
  cleanups.push(() => render.close());
  const relay = new WorkerRelay(
    { id: 'ctx0', upstream, host: '127.0.0.1', port: 0 },
    {
      sink,
      status: new SourceStatusBoard({ sink, clock: Date.now }),
      clock: Date.now,
      logger: silentLogger,
      inflight: new InflightTracker(),
      parseEvents: parseKvEvents,
      render,
      onRender: (_s, result, reason) => renders.push(reason ?? result),
    },
    { drainIntervalMs: 1000 },
  );
  await relay.start();
  cleanups.push(() => relay.stop());
  return { sink, renders, base: `http://127.0.0.1:${relay.address().port}` };
}

async function post(base: string, path: string, body: Uint8Array | string, msgpack = false): Promise<void> {
  const res = await request(`${base}${path}`, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', ...(msgpack ? { 'x-trtllm-msgpack': '1' } : {}) },
  });
  await res.body.text();
  expect(res.statusCode).toBe(200);
}

const chat = {
  model: 'deepseek-ai/DeepSeek-V3',
  messages: [
    { role: 'system', content: 'You are a careful coding agent.' },
    { role: 'user', content: 'Fix the failing test in src/app.ts, please.' },
  ],
  disaggregated_params: { request_type: 'context_only', disagg_request_id: 41, conversation_id: 'traj-1' },
};

describe('relay with --tokenizer: router-side ids and render parity', () => {
  it("chat (JSON and msgpack) and text: the decision carries the router-side ids, equal to the worker's", async () => {
    const { sink, renders, base } = await setup();
    await post(base, '/v1/chat/completions', JSON.stringify(chat));
    await post(base, '/v1/chat/completions', encode(chat), true);
    await post(
      base,
      '/v1/completions',
      JSON.stringify({
        model: 'm',
        prompt: 'def add(a, b):\n    return a + b',
        disaggregated_params: { request_type: 'context_only' },
      }),
    );
    await eventually(() => sink.of('outcome').length === 3, 5000, 'three outcomes');
    const expected = await tokenizer.render(renderInputOf(chat)!);
    const [json, msgpack, text] = sink.of('decision');
    for (const d of [json!, msgpack!]) {
      expect(d).toMatchObject({
        promptForm: 'chat',
        promptTokensFrom: 'tokenizer',
        promptTokenCount: expected.length,
        correlationId: 'traj-1',
      });
      expect([...d.promptTokens!]).toEqual([...expected]);
    }
    expect(text).toMatchObject({ promptForm: 'text', promptTokensFrom: 'tokenizer' });
    expect(text!.promptTokens![0]).toBe(0); // BOS, as tokenizer(prompt) gives it
    expect(renders).toEqual(['rendered', 'rendered', 'rendered']);
    const checks = sink.of('render-check');
    expect(checks).toHaveLength(3);
    for (const c of checks) expect(c).toMatchObject({ routerIds: 'tokenizer', diff: null });
    // the render-check sits between its decision and its outcome
    const kinds = sink.observations.map((o) => o.kind).filter((k) => k !== 'source-health');
    expect(kinds.slice(0, 3)).toEqual(['decision', 'render-check', 'outcome']);
  });

  it('a worker that doubles BOS: render-check at position 1, doubled-bos on the worker side, ids only', async () => {
    const { sink, base } = await setup('doubled-bos');
    await post(base, '/v1/chat/completions', JSON.stringify(chat));
    await eventually(() => sink.of('render-check').length === 1, 5000, 'the render-check');
    const diff = sink.of('render-check')[0]!.diff!;
    expect(diff).toMatchObject({ position: 1, cause: 'doubled-bos', side: 'worker', routerSpan: 0, workerSpan: 1 });
    expect(diff.workerWindow.slice(0, 2)).toEqual([0, 0]);
  });

  it('a worker rendering without the generation prompt: the tail differs', async () => {
    const { sink, base } = await setup('no-generation-prompt');
    await post(base, '/v1/chat/completions', JSON.stringify(chat));
    await eventually(() => sink.of('render-check').length === 1, 5000, 'the render-check');
    expect(sink.of('render-check')[0]!.diff).toMatchObject({
      cause: 'generation-prompt',
      side: 'router',
      routerSpan: 1,
      workerSpan: 0,
    });
  });

  it("ids the request carries are the router's (no render); the worker's are compared with them", async () => {
    const { sink, renders, base } = await setup();
    await post(base, '/v1/chat/completions', JSON.stringify({ ...chat, prompt_token_ids: [0, 5, 6, 7, 8] }));
    await eventually(() => sink.of('render-check').length === 1, 5000, 'the render-check');
    expect(renders).toEqual([]);
    expect(sink.of('decision')[0]).not.toHaveProperty('promptTokensFrom');
    expect(sink.of('render-check')[0]).toMatchObject({ routerIds: 'request', diff: null, promptTokens: 5 });
  });

  it('a chat request that cannot be rendered (no chat template, a template raising) is counted and recorded without ids', async () => {
    const noTemplate = ModelTokenizer.load(deepseekVariant((config) => ({ ...config, chat_template: null })));
    const a = await setup('same', noTemplate);
    await post(a.base, '/v1/chat/completions', JSON.stringify(chat));
    await eventually(() => a.sink.of('outcome').length === 1, 5000, 'the outcome');
    expect(a.renders).toEqual(['no-chat-template']);
    expect(a.sink.of('decision')[0]).toMatchObject({ promptTokens: null, promptForm: 'chat' });
    expect(a.sink.of('render-check')).toEqual([]);
    const raising = ModelTokenizer.load(deepseekVariant((config) => ({ ...config, chat_template: TOOLS_TEMPLATE })));
    const b = await setup('same', raising);
    await post(
      b.base,
      '/v1/chat/completions',
      JSON.stringify({ ...chat, messages: [{ role: 'narrator', content: 'x' }] }),
    );
    await eventually(() => b.sink.of('outcome').length === 1, 5000, 'the outcome');
    expect(b.renders).toEqual(['template-error']);
  });
});
