import { describe, expect, it } from 'vitest';
import type { Observation } from '../observe/observation.js';
import { parseRequestLogLine } from '../watch/request-log.js';
import { createSentinelState } from './sentinel-state.js';
import { inTokens } from './worker-block-counts.js';

const sizes = { advertisedBlockSize: (server: string): number | null => (server === 'ctx0' ? 128 : null) };

function perfMetricsLine(requestId: number, allocated: number, reused: number): Observation[] {
  const line = JSON.stringify({
    ctx_server: 'ctx0',
    disagg_request_id: requestId,
    ctx_perf_metrics: {
      request_id: requestId,
      perf_metrics: { kv_cache_metrics: { num_total_allocated_blocks: allocated, num_reused_blocks: reused } },
    },
  });
  return parseRequestLogLine(line, 1, 'perf-metrics', { now: 1000 + requestId, resolve: (name) => name }).observations;
}

describe('inTokens', () => {
  it("turns a decision's and an outcome's worker blocks into tokens with the server's block size, dropping the blocks", () => {
    const [decision, outcome] = perfMetricsLine(1, 10, 8).map((o) => inTokens(o, sizes));
    expect(decision).toEqual({
      kind: 'decision',
      ts: 1001,
      requestId: '1',
      correlationId: null,
      server: 'ctx0',
      promptTokens: null,
      promptTokenCount: 1280,
      inflight: null,
    });
    expect(outcome).toEqual({
      kind: 'outcome',
      ts: 1001,
      requestId: '1',
      server: 'ctx0',
      ok: true,
      promptTokens: 1280,
      cachedTokens: 1024,
      latencyMs: null,
    });
  });

  it('leaves the counts unknown while the block size is, and observations counted in tokens as they are', () => {
    const [, outcome] = perfMetricsLine(2, 10, 8).map((o) => inTokens({ ...o, server: 'ctx1' } as Observation, sizes));
    expect(outcome).toMatchObject({ promptTokens: null, cachedTokens: null });
    expect(outcome).not.toHaveProperty('cachedBlocks');
    const inTokensAlready: Observation = {
      kind: 'outcome',
      ts: 1,
      requestId: 'r',
      server: 'ctx0',
      ok: true,
      promptTokens: 40,
      cachedTokens: 32,
      latencyMs: null,
    };
    expect(inTokens(inTokensAlready, sizes)).toBe(inTokensAlready);
  });
});

describe('the state applies request-log blocks in tokens', () => {
  it("with the worker's block size as it knows it when each line arrives", () => {
    const state = createSentinelState();
    for (const o of perfMetricsLine(1, 4, 2)) state.apply(o); // no size yet: unknown counts
    state.apply({ kind: 'server-info', ts: 1010, server: 'ctx0', hashAlgo: null, tokensPerBlock: 64 });
    for (const o of perfMetricsLine(20, 10, 8)) state.apply(o);
    const seen: Observation[] = [];
    state.onApplied((o) => void seen.push(o));
    for (const o of perfMetricsLine(30, 2, 1)) state.apply(o);
    const server = state.snapshot(2000).servers.find((s) => s.server === 'ctx0');
    expect(server).toMatchObject({ promptTokens: 640 + 128, cachedTokens: 512 + 64 });
    expect(seen.map((o) => (o.kind === 'outcome' ? [o.promptTokens, o.cachedTokens] : null))).toEqual([
      null,
      [128, 64],
    ]);
  });
});
