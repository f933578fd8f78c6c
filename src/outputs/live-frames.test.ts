import { describe, expect, it } from 'vitest';
import { snapshotFixture, inertFinding } from '../../test/helpers/snapshot-fixture.js';
import { findingChanges, observationFrame, statsFrame, withDecisionJoin, type DecisionFrame } from './live-frames.js';
import { renderLandingPage } from './landing-page.js';

describe('live frames', () => {
  it('turns a decision into counts and ids, never token ids', () => {
    const f = observationFrame({
      kind: 'decision',
      ts: 1,
      requestId: 'r',
      correlationId: 'c',
      server: 's',
      promptTokens: Uint32Array.from([9, 8, 7]),
      promptTokenCount: 3,
      inflight: { s: 1 },
    });
    expect(f).toEqual({
      type: 'decision',
      ts: 1,
      server: 's',
      request_id: 'r',
      correlation_id: 'c',
      prompt_token_count: 3,
      inflight: { s: 1 },
    });
    expect(JSON.stringify(f)).not.toMatch(/9,8,7|\[9/);
    expect(
      observationFrame({ kind: 'router-poll', ts: 1, server: 's', consumer: 'c', fromSeq: 0, toSeq: 1, dropped: 0 }),
    ).toBeNull();
  });

  it('adds the state join as counts and server ids', () => {
    const base = observationFrame({
      kind: 'decision',
      ts: 1,
      requestId: 'r',
      correlationId: null,
      server: 'a',
      promptTokens: null,
      promptTokenCount: 40,
      inflight: null,
    }) as DecisionFrame;
    const f = withDecisionJoin(base, {
      followup: true,
      sticky: false,
      oracleBest: ['b'],
      chosenIsOracleBest: false,
      candidates: [
        { server: 'a', predictedTokens: 0, oracleTokens: 0, score: -0.01 },
        { server: 'b', predictedTokens: 0, oracleTokens: 32, score: 0 },
      ],
    });
    expect(f).toMatchObject({
      followup: true,
      sticky: false,
      chosen_is_oracle_best: false,
      oracle_best: ['b'],
      candidates: [
        { server: 'a', predicted_tokens: 0, oracle_tokens: 0, score: -0.01 },
        { server: 'b', oracle_tokens: 32 },
      ],
    });
  });

  it('reports raised and cleared findings between snapshots', () => {
    expect(findingChanges([], [inertFinding], 5)).toMatchObject([
      { type: 'finding', change: 'raised', id: 'cache-signal-inert', ts: 5 },
    ]);
    expect(findingChanges([inertFinding], [inertFinding], 5)).toEqual([]);
    expect(findingChanges([inertFinding], [], 6)).toMatchObject([{ change: 'cleared', id: 'cache-signal-inert' }]);
  });

  it('summarises tables per server', () => {
    const s = statsFrame(snapshotFixture());
    expect(s).toMatchObject({ type: 'stats', verdict: 'inert', requests: 40, active_findings: ['cache-signal-inert'] });
    expect(s.servers[0]).toEqual({
      server: 'ctx0',
      worker_blocks: 124,
      router_table_blocks: 0,
      requests: 20,
      inflight: 2,
      router_polls: 17,
      events: 44,
      gaps: 2,
    });
  });

  it('escapes what the landing page shows', () => {
    const html = renderLandingPage({
      version: '1',
      verdict: null,
      findings: [],
      relays: [],
      sources: [
        {
          source: '<x>',
          up: false,
          seen: true,
          lastError: '"a"&b',
          lastOkAt: null,
          lastErrorAt: 1,
          errors: {},
          badInput: {},
        },
      ],
    });
    expect(html).toContain('&#60;x&#62;');
    expect(html).toContain('&#34;a&#34;&#38;b');
    expect(html).toContain('No active findings.');
  });
});
