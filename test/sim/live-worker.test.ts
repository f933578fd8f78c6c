// The simulated CTX worker on real ports: destructive /kv_cache_events with TensorRT-LLM's exact JSON (u64 hashes
// beyond 2^53 survive a lossless parse), /server_info, SSE usage, /perf_metrics, /prometheus/metrics, and the
// event faults as they look on the wire.
import { afterEach, describe, expect, it } from 'vitest';
import { blockKey64 } from '../../src/core/hashing/index.js';
import { parseKvEvents } from '../../src/core/wire/parse-kv-events.js';
import { parseUsage } from '../../src/core/wire/parse-usage.js';
import { digestEvent } from '../../src/sim/live/event-digest.js';
import { startLiveCluster, type LiveCluster } from '../../src/sim/live/index.js';
import { StaticPrompt } from '../../src/sim/prompt.js';
import { contextOnlyBody, get, post, smallConfig, sseEvents, tokens } from './live-helpers.js';

let cluster: LiveCluster | null = null;

afterEach(async () => {
  await cluster?.stop();
  cluster = null;
});

const TWO_53 = 2n ** 53n;

describe('live CTX worker', () => {
  it('drains /kv_cache_events destructively with exact u64 hashes', async () => {
    cluster = await startLiveCluster(smallConfig('healthy'));
    const w = cluster.workers[0]!;
    const prompt = tokens(128 * 12 + 50, 7);
    const res = await post(`${w.url}/v1/completions`, contextOnlyBody(prompt));
    expect(res.status).toBe(200);
    expect(parseUsage(res.text).value).toMatchObject({ promptTokens: prompt.length, cachedTokens: 0 });

    const first = await post(`${w.url}/kv_cache_events`, '');
    expect(first.status).toBe(200);
    expect(first.contentType).toContain('application/json');
    const parsed = parseKvEvents(first.text);
    expect(parsed.issues).toEqual([]);
    const events = parsed.events.map((p) => p.event);
    // 2 ranks: a `created` per rank, then the stored blocks of the one request
    expect(
      events
        .filter((e) => e.data.type === 'created')
        .map((e) => e.attentionDpRank)
        .sort(),
    ).toEqual([0, 1]);
    const stored = events.flatMap((e) => (e.data.type === 'stored' ? e.data.blocks.map((b) => b.blockHash) : []));
    const expected = new StaticPrompt(Uint32Array.from(prompt)).blocks(128, 'v1_block_key').wire;
    expect(stored).toEqual(expected);
    // the body carries the hashes as exact decimal integers, and some are beyond 2^53 where JSON.parse rounds
    const big = stored.filter((h): h is bigint => typeof h === 'bigint' && h > TWO_53);
    expect(big.length).toBeGreaterThan(0);
    for (const h of big) {
      expect(first.text).toContain(`"block_hash":${h}`);
      expect(BigInt(Number(h))).not.toBe(h);
    }
    // what the worker model served is what came over the wire
    expect(events.map(digestEvent)).toEqual(cluster.worker(w.id).served.entries);

    const second = await post(`${w.url}/kv_cache_events`, '');
    expect(second).toMatchObject({ status: 200, text: '[]' });

    // the same prompt again: whole blocks reused
    const again = await post(`${w.url}/v1/completions`, contextOnlyBody(prompt));
    expect(parseUsage(again.text).value?.cachedTokens).toBe(12 * 128);
    expect(JSON.parse(again.text)).toMatchObject({
      object: 'text_completion',
      choices: [{ disaggregated_params: { request_type: 'context_only' } }],
    });
  });

  it('advertises kv_cache_hash_algo on /server_info and serves v2_sha256 hashes as hex', async () => {
    cluster = await startLiveCluster(smallConfig('healthy', ['ctx.hash_algo=v2_sha256']));
    const w = cluster.workers[1]!;
    const info = await get(`${w.url}/server_info`);
    expect(JSON.parse(info.text)).toEqual({
      disaggregated_params: { disaggregated_mode: 'context_only' },
      kv_cache_hash_algo: 'v2_sha256',
      tokens_per_block: 128,
    });
    expect((await get(`${w.url}/health`)).status).toBe(200);
    const prompt = tokens(300, 3);
    await post(`${w.url}/v1/completions`, contextOnlyBody(prompt));
    const events = parseKvEvents((await post(`${w.url}/kv_cache_events`, '')).text).events.map((p) => p.event);
    const stored = events.flatMap((e) => (e.data.type === 'stored' ? e.data.blocks.map((b) => b.blockHash) : []));
    expect(stored).toEqual(new StaticPrompt(Uint32Array.from(prompt)).blocks(128, 'v2_sha256').wire);
    expect(stored.every((h) => typeof h === 'string' && /^[0-9a-f]{64}$/.test(h))).toBe(true);
    expect(stored.map(blockKey64).length).toBe(3);
  });

  it('streams SSE with usage (cached_tokens) in the final chunk, chat and completions', async () => {
    cluster = await startLiveCluster(smallConfig('healthy'));
    const w = cluster.workers[0]!;
    const prompt = tokens(700, 11);
    await post(`${w.url}/v1/completions`, contextOnlyBody(prompt));
    const res = await post(
      `${w.url}/v1/completions`,
      JSON.stringify({ model: 'm', prompt, max_tokens: 4, stream: true }),
    );
    expect(res.contentType).toContain('text/event-stream');
    const chunks = sseEvents(res.text);
    expect(chunks.at(-1)).toBe('[DONE]');
    const usages = chunks.map((c) => parseUsage(c).value);
    expect(usages.slice(0, -2).every((u) => u === null)).toBe(true);
    expect(usages.at(-2)).toMatchObject({ promptTokens: 700, cachedTokens: 5 * 128, completionTokens: 4 });

    const chat = await post(
      `${w.url}/v1/chat/completions`,
      JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x'.repeat(400) }], stream: true }),
    );
    const chatChunks = sseEvents(chat.text);
    expect(JSON.parse(chatChunks[0]!)).toMatchObject({ object: 'chat.completion.chunk' });
    expect(parseUsage(chatChunks.at(-2)!).value?.cachedTokens).toBe(0);
  });

  it('drains /perf_metrics and exposes trtllm_ Prometheus metrics', async () => {
    cluster = await startLiveCluster(smallConfig('healthy'));
    const w = cluster.workers[0]!;
    const prompt = tokens(600, 5);
    await post(`${w.url}/v1/completions`, contextOnlyBody(prompt));
    await post(`${w.url}/v1/completions`, contextOnlyBody(prompt));
    const perf = JSON.parse((await get(`${w.url}/perf_metrics`)).text) as {
      perf_metrics: { kv_cache_metrics: { num_reused_blocks: number; num_total_allocated_blocks: number } };
    }[];
    expect(perf.map((p) => p.perf_metrics.kv_cache_metrics)).toEqual([
      { num_total_allocated_blocks: 5, num_new_allocated_blocks: 5, num_reused_blocks: 0, num_missed_blocks: 5 },
      { num_total_allocated_blocks: 5, num_new_allocated_blocks: 1, num_reused_blocks: 4, num_missed_blocks: 1 },
    ]);
    expect((await get(`${w.url}/perf_metrics`)).text).toBe('[]');
    const prom = (await get(`${w.url}/prometheus/metrics`)).text;
    expect(prom).toMatch(/^trtllm_prompt_cached_tokens_total\{[^}]*\} 512$/m);
    expect(prom).toMatch(/^trtllm_request_success_total\{[^}]*\} 2$/m);
  });

  it('rejects bad requests with a message naming the field', async () => {
    cluster = await startLiveCluster(smallConfig('healthy'));
    const w = cluster.workers[0]!;
    const res = await post(`${w.url}/v1/completions`, JSON.stringify({ prompt: [1, 2, -3] }));
    expect(res.status).toBe(400);
    expect(res.text).toContain('prompt[2]');
    expect((await post(`${w.url}/v1/completions`, '{"prompt":')).status).toBe(400);
    expect((await get(`${w.url}/nope`)).status).toBe(404);
  });
});

describe('live CTX worker faults on the wire', () => {
  it('event_buffer_max_size=0: every drain is []', async () => {
    cluster = await startLiveCluster(smallConfig('seed'));
    const w = cluster.workers[0]!;
    await post(`${w.url}/v1/completions`, contextOnlyBody(tokens(500, 1)));
    expect(await post(`${w.url}/kv_cache_events`, '')).toMatchObject({ status: 200, text: '[]' });
    expect(cluster.worker(w.id).worker.events.stats.emitted).toBe(0);
  });

  it('push mode: ids are used, the pull path reads []', async () => {
    cluster = await startLiveCluster(smallConfig('healthy', ['ctx.kv_events_push=true']));
    const w = cluster.workers[0]!;
    await post(`${w.url}/v1/completions`, contextOnlyBody(tokens(500, 1)));
    expect(await post(`${w.url}/kv_cache_events`, '')).toMatchObject({ status: 200, text: '[]' });
    // the managers exist (the `created` events took ids 0 on both ranks) but nothing reaches the pull queue
    expect(cluster.worker(w.id).worker.events.stats.emitted).toBeGreaterThanOrEqual(2);
    expect(cluster.worker(w.id).worker.events.stats.drained).toBe(0);
  });

  it('competing consumer: a background drainer takes the events', async () => {
    cluster = await startLiveCluster(
      smallConfig('healthy', ['ctx.competing_consumer=true', 'ctx.competitor_period=20ms']),
    );
    const w = cluster.workers[0]!;
    await post(`${w.url}/v1/completions`, contextOnlyBody(tokens(500, 1)));
    await new Promise((r) => setTimeout(r, 100));
    expect((await post(`${w.url}/kv_cache_events`, '')).text).toBe('[]');
    expect(cluster.worker(w.id).stats.eventsStolen).toBeGreaterThan(2);
  });

  it('restart: connection refused during the downtime, then event ids from 0', async () => {
    cluster = await startLiveCluster(smallConfig('healthy'));
    const w = cluster.workers[0]!;
    await post(`${w.url}/v1/completions`, contextOnlyBody(tokens(500, 1)));
    const before = parseKvEvents((await post(`${w.url}/kv_cache_events`, '')).text).events;
    expect(before.length).toBeGreaterThan(2);
    const restarted = cluster.restartWorker(w.id);
    await new Promise((r) => setTimeout(r, 50));
    await expect(post(`${w.url}/kv_cache_events`, '')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await restarted;
    await new Promise((r) => setTimeout(r, 30)); // rank 1's `created` reaches rank 0's queue after the gather period
    const after = parseKvEvents((await post(`${w.url}/kv_cache_events`, '')).text).events.map((p) => p.event);
    expect(after.map((e) => [e.attentionDpRank, e.eventId, e.data.type])).toEqual([
      [0, 0, 'created'],
      [1, 0, 'created'],
    ]);
  });
});
