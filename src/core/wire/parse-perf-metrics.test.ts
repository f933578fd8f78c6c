import { describe, expect, it } from 'vitest';
import { kvCacheHitRate, parsePerfMetrics } from './parse-perf-metrics.js';

const worker = (id: string, reused: number, missed: number): string =>
  `{"request_id":${id},"perf_metrics":{"first_iter":3,"last_iter":9,"timing_metrics":{"server_arrival_time":1712.5,"arrival_time":1712.6,` +
  `"first_scheduled_time":1712.7,"first_token_time":1713,"server_first_token_time":1713.1,"last_token_time":1714.25},` +
  `"kv_cache_metrics":{"num_total_allocated_blocks":10,"num_new_allocated_blocks":4,"num_reused_blocks":${reused},"num_missed_blocks":${missed}}},` +
  `"ctx_request_id":${id}}`;

describe('parsePerfMetrics', () => {
  it('reads worker entries, request ids exact', () => {
    const { value, issues } = parsePerfMetrics(`[${worker('18446744073709551615', 6, 4)}]`);
    expect(issues).toEqual([]);
    const [entry] = value;
    expect(entry).toMatchObject({
      kind: 'worker',
      requestId: 18446744073709551615n,
      ctxRequestId: 18446744073709551615n,
      firstIter: 3,
      lastIter: 9,
      timing: { serverArrivalTime: 1712.5, firstTokenTime: 1713, lastTokenTime: 1714.25, kvCacheSize: null },
      kvCache: { numTotalAllocatedBlocks: 10, numNewAllocatedBlocks: 4, numReusedBlocks: 6, numMissedBlocks: 4 },
    });
    expect(entry?.kind === 'worker' && kvCacheHitRate(entry.kvCache)).toBeCloseTo(0.6);
  });

  it('reads the disaggregated server join, with a missing ctx side', () => {
    const text =
      `[{"ctx_server":"ctx-0:8001","gen_server":"gen-0:8002","disagg_server_arrival_time":1.5,"disagg_server_first_token_time":2.5,` +
      `"ctx_perf_metrics":${worker('7', 96, 32)},"gen_perf_metrics":${worker('7', 0, 0)}},` +
      `{"ctx_server":"ctx-1:8001","gen_server":"gen-0:8002","ctx_perf_metrics":null,"gen_perf_metrics":${worker('"r8"', 0, 1)}}]`;
    const { value, issues } = parsePerfMetrics(text);
    expect(issues).toEqual([]);
    expect(value).toHaveLength(2);
    const [a, b] = value;
    expect(a).toMatchObject({
      kind: 'disagg',
      ctxServer: 'ctx-0:8001',
      genServer: 'gen-0:8002',
      disaggServerArrivalTime: 1.5,
    });
    expect(a?.kind === 'disagg' && a.ctx?.kvCache?.numReusedBlocks).toBe(96);
    expect(a?.kind === 'disagg' && kvCacheHitRate(a.ctx?.kvCache ?? null)).toBe(0.75);
    expect(a?.kind === 'disagg' && kvCacheHitRate(a.gen?.kvCache ?? null)).toBeNull();
    expect(b).toMatchObject({ kind: 'disagg', ctx: null, gen: { requestId: 'r8' } });
  });

  it('skips a non-object entry and reports bad fields with their paths', () => {
    const text = `[5,{"request_id":1,"perf_metrics":{"kv_cache_metrics":{"num_reused_blocks":1.5}}}]`;
    const { value, issues } = parsePerfMetrics(text);
    expect(value).toHaveLength(1);
    expect(issues.map((i) => [i.code, i.path, i.offset])).toEqual([
      ['wrong-type', '$[0]', 1],
      ['not-an-integer', '$[1].perf_metrics.kv_cache_metrics.num_reused_blocks', text.indexOf('1.5')],
    ]);
  });

  it('answers [] for a disabled endpoint and an issue for a non-array', () => {
    expect(parsePerfMetrics('[]')).toEqual({ value: [], issues: [] });
    expect(parsePerfMetrics('{}').issues).toEqual([expect.objectContaining({ code: 'not-an-array', path: '$' })]);
  });
});
