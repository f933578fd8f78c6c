import { describe, expect, it } from 'vitest';
import { parseOrchestratorLogLine } from './orchestrator-log.js';
import { parseRequestLogLine } from './request-log.js';
import { parseRouterDebug } from './router-debug.js';
import { createServerResolver } from './server-resolver.js';

const resolve = createServerResolver({
  ctx0: ['http://10.0.0.5:8001', '0.0.0.0:9401', ':9401'],
  ctx1: ['http://10.0.0.6:8001'],
});

describe('server resolver', () => {
  it.each([
    ['10.0.0.5:8001', 'ctx0'],
    ['http://10.0.0.5:8001/', 'ctx0'],
    ['sidecar.pod:9401', 'ctx0'],
    ['ctx1', 'ctx1'],
    ['10.0.0.6:8001', 'ctx1'],
    ['elsewhere:1234', 'elsewhere:1234'],
  ])('%s → %s', (name, id) => expect(resolve(name)).toBe(id));
});

describe('orchestrator log', () => {
  it('reads the router block size, type, batch size and backfill', () => {
    const [o] = parseOrchestratorLogLine(
      '[TRT-LLM] [I] BlockHashMixin: tokens_per_block=32, custom_tokenizer=None',
      5,
      resolve,
    );
    expect(o).toMatchObject({
      kind: 'router-config',
      source: 'orchestrator-log',
      tokensPerBlock: 32,
      routerType: null,
    });
    const [c] = parseOrchestratorLogLine(
      "ctx router config: {'type': 'kv_cache_aware', 'max_batch_size': 512, 'backfill_block_hashes_on_finish': True}",
      5,
      resolve,
    );
    expect(c).toMatchObject({ routerType: 'kv_cache_aware', maxBatchSize: 512, backfillBlockHashesOnFinish: true });
  });

  it('reads poll failures, including the empty message of a timeout', () => {
    expect(
      parseOrchestratorLogLine('[W] Failed to poll KV cache events from 10.0.0.5:8001: Cannot connect', 7, resolve),
    ).toEqual([{ kind: 'poll-failure', ts: 7, server: 'ctx0', message: 'Cannot connect' }]);
    expect(
      parseOrchestratorLogLine('[W] Failed to poll KV cache events from sidecar:9401: ', 7, resolve)[0],
    ).toMatchObject({ server: 'ctx0', message: 'timeout (empty error)' });
  });

  it('attributes server info only when the line names the server', () => {
    expect(
      parseOrchestratorLogLine("server is ready with info: {'kv_cache_hash_algo': 'v2_sha256'}", 1, resolve),
    ).toEqual([]);
    expect(
      parseOrchestratorLogLine(
        "10.0.0.6:8001 is ready with info: {'kv_cache_hash_algo': 'v2_sha256', 'tokens_per_block': 128}",
        1,
        resolve,
      ),
    ).toEqual([{ kind: 'server-info', ts: 1, server: 'ctx1', hashAlgo: 'v2_sha256', tokensPerBlock: 128 }]);
    expect(
      parseOrchestratorLogLine(
        "[06/03/2026-00:00:00] [TRT-LLM] [I] ctx1 server is ready with info: {'kv_cache_hash_algo': 'v1_block_key'}",
        1,
        resolve,
      )[0],
    ).toMatchObject({ server: 'ctx1', hashAlgo: 'v1_block_key' });
    expect(
      parseOrchestratorLogLine(
        "[06/03/2026-00:00:00] [TRT-LLM] [I] server is ready with info: {'kv_cache_hash_algo': 'v1_block_key'}",
        1,
        resolve,
      ),
    ).toEqual([]);
    expect(parseOrchestratorLogLine('INFO: 127.0.0.1 - "POST /v1/completions HTTP/1.1" 200 OK', 1, resolve)).toEqual(
      [],
    );
  });
});

describe('orchestrator log of the newest router', () => {
  it('reads "(auto, adopts worker)" as no size stated, and the adopted size that follows as the router\'s', () => {
    const auto = parseOrchestratorLogLine(
      '[TRT-LLM] [I] BlockHashMixin: tokens_per_block=32 (auto, adopts worker), custom_tokenizer=None, model_path=None, use_harmony=None',
      1,
      resolve,
    );
    expect(auto).toEqual([expect.objectContaining({ kind: 'router-config', tokensPerBlock: null, profile: 'newest' })]);
    expect(
      parseOrchestratorLogLine(
        "[TRT-LLM] [I] router tokens_per_block unset: adopting worker's 128 on 10.0.0.5:8001",
        2,
        resolve,
      ),
    ).toEqual([
      expect.objectContaining({ kind: 'router-config', tokensPerBlock: 128, profile: 'newest' }),
      { kind: 'server-info', ts: 2, server: 'ctx0', hashAlgo: null, tokensPerBlock: 128 },
    ]);
  });

  it('reads polling skipped by design on a tokens_per_block mismatch, and a server never prepared when sizes do not divide', () => {
    const line =
      '[TRT-LLM] [W] tokens_per_block mismatch on 10.0.0.6:8001: router=32 worker=128. KV events from worker cannot align with router block hashes; skipping event polling and relying on routed-block tracking for hit rate.';
    const out = parseOrchestratorLogLine(line, 3, resolve);
    expect(out[0]).toMatchObject({ kind: 'router-config', tokensPerBlock: 32, profile: 'newest' });
    expect(out[1]).toEqual({ kind: 'server-info', ts: 3, server: 'ctx1', hashAlgo: null, tokensPerBlock: 128 });
    expect(out[2]).toEqual({
      kind: 'router-server-fact',
      ts: 3,
      server: 'ctx1',
      fact: 'polling-skipped',
      routerTokensPerBlock: 32,
      workerTokensPerBlock: 128,
      divisible: true,
    });
    const never = parseOrchestratorLogLine(
      'RuntimeError: tokens_per_block mismatch on 10.0.0.6:8001: router=48 worker=128 are not divisible. Align kv_cache_config.tokens_per_block',
      3,
      resolve,
    );
    expect(never[2]).toMatchObject({ fact: 'polling-skipped', divisible: false });
  });

  it('reads EVENT_MATCH_DIAG counts and never the query hashes', () => {
    const out = parseOrchestratorLogLine(
      '[TRT-LLM] [I] EVENT_MATCH_DIAG server=10.0.0.5:8001 total_match=4096 event_match=0 event_blocks=0 total_blocks=812 query_hashes=[123, 456, 789]',
      4,
      resolve,
    );
    expect(out[1]).toEqual({
      kind: 'router-server-fact',
      ts: 4,
      server: 'ctx0',
      fact: 'event-match',
      totalMatch: 4096,
      eventMatch: 0,
      eventBlocks: 0,
      totalBlocks: 812,
    });
    expect(JSON.stringify(out)).not.toContain('456');
  });
});

describe('router debug endpoint', () => {
  const doc = `{"router":{"type":"kv_cache_aware","tokens_per_block":32,"max_batch_size":64,"backfill_block_hashes_on_finish":false},
    "servers":[{"url":"sidecar:9401","active_requests":3,"hash_algo":"v1_block_key","block_table_size":0,"polls":12,"poll_failures":1},{"url":"10.0.0.6:8001"}],
    "decisions":[{"seq":4,"ts":1700000000.5,"request_id":18446744073709551557,"correlation_id":"t1","chosen":"sidecar:9401","candidates":[{"server":"sidecar:9401","matched_tokens":0,"active_requests":3,"score":-0.046875}]},
                 {"seq":5,"ts":1700000001,"request_id":"r5","correlation_id":null,"chosen":"10.0.0.6:8001","candidates":[]},
                 {"seq":"x"}]}`;

  it('yields config, per-server state and decisions with exact ids, skipping bad entries with an issue', () => {
    const r = parseRouterDebug(doc, 99, resolve, null);
    expect(r.maxSeq).toBe(5);
    expect(r.observations[0]).toEqual({
      kind: 'router-config',
      ts: 99,
      source: 'debug-endpoint',
      routerType: 'kv_cache_aware',
      tokensPerBlock: 32,
      maxBatchSize: 64,
      backfillBlockHashesOnFinish: false,
      servers: ['ctx0', 'ctx1'],
    });
    expect(r.observations[1]).toMatchObject({
      kind: 'router-state',
      server: 'ctx0',
      activeRequests: 3,
      blockTableSize: 0,
      polls: 12,
      pollFailures: 1,
      hashAlgo: 'v1_block_key',
    });
    const scores = r.observations.filter((o) => o.kind === 'router-score');
    expect(scores[0]).toMatchObject({
      seq: 4,
      ts: 1700000000500,
      requestId: '18446744073709551557',
      chosen: 'ctx0',
      candidates: [{ server: 'ctx0', matchedTokens: 0, activeRequests: 3, score: -0.046875 }],
    });
    expect(r.issues.length).toBeGreaterThan(0);
  });

  it('drops decisions at or below `since` and reports a non-object body', () => {
    expect(
      parseRouterDebug(doc, 0, resolve, 4)
        .observations.filter((o) => o.kind === 'router-score')
        .map((o) => (o.kind === 'router-score' ? o.seq : 0)),
    ).toEqual([5]);
    expect(parseRouterDebug('[1,2]', 0, resolve, null).issues[0]?.code).toBe('wrong-type');
    expect(parseRouterDebug('{"servers":', 0, resolve, null).observations).toEqual([]);
  });
});

describe('request log lines', () => {
  const ctx = { now: 50, resolve };

  it('canonical: a decision with exact token ids and its outcome', () => {
    const r = parseRequestLogLine(
      '{"ts":1700000000,"request_id":18446744073709551557,"correlation_id":"t","ctx_server":"10.0.0.5:8001","prompt_tokens":3,"cached_tokens":2,"prompt_token_ids":[1,2,3]}',
      1,
      'auto',
      ctx,
    );
    expect(r.issue).toBeNull();
    const [d, o] = r.observations;
    expect(d).toMatchObject({
      kind: 'decision',
      ts: 1_700_000_000_000,
      requestId: '18446744073709551557',
      server: 'ctx0',
      correlationId: 't',
      promptTokenCount: 3,
    });
    expect(d?.kind === 'decision' ? [...(d.promptTokens ?? [])] : null).toEqual([1, 2, 3]);
    expect(o).toMatchObject({ kind: 'outcome', ok: true, promptTokens: 3, cachedTokens: 2 });
  });

  it("perf-metrics: the prompt and its reuse in the worker's blocks (the state turns them into tokens)", () => {
    const line =
      '{"ctx_server":"10.0.0.5:8001","gen_server":"g:1","disagg_request_id":77,"ctx_perf_metrics":{"request_id":5,"perf_metrics":{"kv_cache_metrics":{"num_total_allocated_blocks":10,"num_new_allocated_blocks":2,"num_reused_blocks":8,"num_missed_blocks":2}}}}';
    const [d, o] = parseRequestLogLine(line, 3, 'auto', ctx).observations;
    expect(d).toMatchObject({ kind: 'decision', requestId: '77', promptTokenCount: null, promptBlocks: 10 });
    expect(o).toMatchObject({
      requestId: '77',
      server: 'ctx0',
      promptTokens: null,
      cachedTokens: null,
      promptBlocks: 10,
      cachedBlocks: 8,
    });
  });

  it('openai: usage.prompt_tokens_details.cached_tokens', () => {
    const [, o] = parseRequestLogLine(
      '{"id":"cmpl-1","created":1700000000,"ctx_server":"10.0.0.6:8001","usage":{"prompt_tokens":40,"prompt_tokens_details":{"cached_tokens":32}}}',
      1,
      'auto',
      ctx,
    ).observations;
    expect(o).toMatchObject({ requestId: 'cmpl-1', server: 'ctx1', promptTokens: 40, cachedTokens: 32 });
  });

  it("openai: a context-only response's prompt_token_ids (list, first of lists, base64) are the worker's ids", () => {
    const ids = (line: string) => {
      const o = parseRequestLogLine(line, 1, 'openai', ctx).observations[1];
      return o?.kind === 'outcome' && o.workerPromptTokens !== undefined && o.workerPromptTokens !== null
        ? [...o.workerPromptTokens]
        : null;
    };
    const usage = '"usage":{"prompt_tokens":3,"prompt_tokens_details":{"cached_tokens":0}}';
    expect(ids(`{"id":"a",${usage},"prompt_token_ids":[7,8,9]}`)).toEqual([7, 8, 9]);
    expect(ids(`{"id":"a",${usage},"prompt_token_ids":[[7,8],[9]]}`)).toEqual([7, 8]);
    // base64 of int32 little-endian [1, 65536, 2147483647]
    expect(ids(`{"id":"a",${usage},"prompt_token_ids":null,"prompt_token_ids_b64":"AQAAAAAAAQD///9/"}`)).toEqual([
      1, 65536, 2147483647,
    ]);
    expect(ids(`{"id":"a",${usage}}`)).toBeNull();
  });

  it.each([
    ['{"request_id":1}', 'missing-field'],
    ['{"ts":1', 'truncated-json'],
    ['[1]', 'wrong-type'],
    ['{"ctx_perf_metrics":{}}', 'no-server'],
  ])('%s → one issue (%s) with the line number', (line, code) => {
    const r = parseRequestLogLine(line, 42, 'auto', ctx);
    expect(r.observations).toEqual([]);
    expect(r.issue?.code).toBe(code);
    expect(r.issue?.message).toMatch(/^line 42: /);
  });
});
