// Faults that reach the state directly: stored blocks that carry no tokens (a build or a truncated producer that
// omits them) must not make the block size 0 and every later decision throw.
import { describe, expect, it } from 'vitest';
import { createSentinelState } from '../../src/core/state/sentinel-state.js';
import { stored } from '../helpers/kv-event-builders.js';

describe('state under malformed but parseable input', () => {
  it('stored blocks without tokens: decisions are still joined, nothing throws', () => {
    const state = createSentinelState({ mode: 'relay' });
    state.apply({
      kind: 'worker-events',
      ts: 1,
      server: 'ctx0',
      firstSeq: 0,
      events: [stored([18446744073709551615n, 5n])],
    });
    const prompt = Uint32Array.from({ length: 300 }, (_, k) => k);
    expect(() =>
      state.apply({
        kind: 'decision',
        ts: 2,
        requestId: 'r1',
        correlationId: 't1',
        server: 'ctx0',
        promptTokens: prompt,
        promptTokenCount: prompt.length,
        inflight: null,
      }),
    ).not.toThrow();
    state.apply({
      kind: 'outcome',
      ts: 3,
      requestId: 'r1',
      server: 'ctx0',
      ok: true,
      promptTokens: 300,
      cachedTokens: 0,
      latencyMs: 1,
    });
    const s = state.evaluate(4);
    expect(s.requests).toBe(1);
    expect(s.servers.find((x) => x.server === 'ctx0')?.requests).toBe(1);
  });
});
