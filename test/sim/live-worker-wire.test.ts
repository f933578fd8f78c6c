// The simulated CTX worker speaks what current TensorRT-LLM workers do: msgpack request bodies flagged
// X-TRTLLM-Msgpack: 1, prompt_token_ids in context-only answers (prompt_token_ids_b64 for chat when asked), chat
// requests served from router-written prompt_token_ids, and idle keep-alive connections closed after a timeout.
import { once } from 'node:events';
import { connect } from 'node:net';
import { encode } from '@msgpack/msgpack';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { renderChat } from '../../src/sim/live/openai-request.js';
import { startLiveCluster, type LiveCluster } from '../../src/sim/live/index.js';
import { post, smallConfig, tokens } from './live-helpers.js';

let cluster: LiveCluster | null = null;
afterEach(async () => {
  await cluster?.stop();
  cluster = null;
});

const contextOnly = (extra: Record<string, unknown> = {}) => ({
  request_type: 'context_only',
  disagg_request_id: 7,
  ...extra,
});

describe('live CTX worker wire', () => {
  it('reads msgpack bodies and answers prompt_token_ids', async () => {
    cluster = await startLiveCluster(smallConfig('healthy'));
    const prompt = tokens(300, 3);
    const res = await request(`${cluster.workers[0]!.url}/v1/completions`, {
      method: 'POST',
      body: encode({ model: 'm', prompt, max_tokens: 4, disaggregated_params: contextOnly() }),
      headers: { 'content-type': 'application/json', 'x-trtllm-msgpack': '1' },
    });
    const body = JSON.parse(await res.body.text()) as { prompt_token_ids: number[]; usage: { prompt_tokens: number } };
    expect(res.statusCode).toBe(200);
    expect(body.prompt_token_ids).toEqual(prompt);
    expect(body.usage.prompt_tokens).toBe(300);
  });

  it('answers a chat request that asked for it with prompt_token_ids_b64 (little-endian int32), list null', async () => {
    cluster = await startLiveCluster(smallConfig('healthy'));
    const messages = [{ role: 'user', content: 'héllo 🙂 world' }];
    const res = await post(
      `${cluster.workers[0]!.url}/v1/chat/completions`,
      JSON.stringify({
        model: 'm',
        messages,
        disaggregated_params: contextOnly({ return_prompt_token_ids_b64: true }),
      }),
    );
    const body = JSON.parse(res.text) as { prompt_token_ids: null; prompt_token_ids_b64: string };
    expect(body.prompt_token_ids).toBeNull();
    const bytes = Buffer.from(body.prompt_token_ids_b64, 'base64');
    const ids = Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readInt32LE(i * 4));
    expect(ids).toEqual([...renderChat(messages)]);
  });

  it('serves a chat request from the router-written prompt_token_ids', async () => {
    cluster = await startLiveCluster(smallConfig('healthy'));
    const ids = tokens(50, 9);
    const res = await post(
      `${cluster.workers[0]!.url}/v1/chat/completions`,
      JSON.stringify({
        model: 'm',
        messages: [{ role: 'user', content: 'x' }],
        prompt_token_ids: ids,
        disaggregated_params: contextOnly(),
      }),
    );
    expect((JSON.parse(res.text) as { prompt_token_ids: number[] }).prompt_token_ids).toEqual(ids);
  });

  it('closes an idle keep-alive connection after ctx.keep_alive_timeout', { timeout: 15_000 }, async () => {
    cluster = await startLiveCluster(smallConfig('healthy', ['ctx.keep_alive_timeout=200ms']));
    const { port } = new URL(cluster.workers[0]!.url);
    const socket = connect(Number(port), '127.0.0.1');
    await once(socket, 'connect');
    const started = performance.now();
    socket.resume();
    socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
    await once(socket, 'close');
    const idleMs = performance.now() - started;
    expect(idleMs).toBeGreaterThanOrEqual(150);
    expect(idleMs).toBeLessThan(5_000);
  });
});
