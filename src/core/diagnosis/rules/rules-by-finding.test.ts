// Rule by rule: the conditions each finding waits for, and the ones that must keep it quiet.
import { describe, expect, it } from 'vitest';
import {
  BLIND_PREFERENCE,
  EVENTS_OFF,
  KNOWN_2026_06,
  NO_PREFERENCE,
  firing,
  quietDecisions,
  quietInput,
  quietServer,
  servers,
} from '../../../../test/helpers/diagnosis-input.js';
import { inferredRouterBlockSize } from '../router-block-size.js';
import { runRules } from '../run-rules.js';
import { RULES } from './index.js';

describe('source-unreachable', () => {
  const src = (over: object) =>
    quietInput({
      sources: [
        {
          source: 'relay:ctx1',
          up: false,
          error: 'ECONNREFUSED',
          downSince: 599_000,
          lastFailure: 599_000,
          failures: 1,
          ...over,
        },
      ],
    });
  it('waits for the grace period or three failed reads', () => {
    expect(firing(src({}))).toEqual([]);
    expect(firing(src({ failures: 3 }))).toEqual(['source-unreachable']);
    expect(firing(src({ downSince: 500_000 }))).toEqual(['source-unreachable']);
  });
});

describe('load-term-dominates', () => {
  const base = quietInput({ router: { ...quietInput().router, maxBatchSize: 64 } });
  it('fires when the router, scoring exactly as replicated, keeps choosing a less loaded server over the prefix holder', () => {
    expect(firing({ ...base, decisions: quietDecisions({ sentAwayByLoad: 20 }) })).toEqual(['load-term-dominates']);
  });
  it('a wide load spread alone is evidence, not a finding: the cache advantage is usually far larger than a quarter', () => {
    expect(firing({ ...base, decisions: quietDecisions({ loadSpreadOverCacheDelta: 300 }) })).toEqual([]);
  });
});

describe('cache-signal-inert chance model', () => {
  const logsOnly = (over: object) =>
    quietInput({
      seesWorkerEvents: false,
      routerPollsExpected: false,
      decisions: quietDecisions({
        withKeys: 0,
        predictedAnyMatch: 0,
        oracleAnyMatch: 0,
        oracleBest: 0,
        notOracleBest: 0,
        noPrefix: 0,
        preference: NO_PREFERENCE,
        ...over,
      }),
    });
  it('uneven load raises chance stickiness to Σ share²: 50% sticky is chance when one server takes half the load', () => {
    // shares 0.16 / 0.54 / 0.30 → Σ share² = 0.405
    expect(firing(logsOnly({ sticky: 250, stickinessByLoadShare: 0.405 }))).toContain('cache-signal-inert');
    expect(firing(logsOnly({ sticky: 250, stickinessByLoadShare: 1 / 3 }))).not.toContain('cache-signal-inert');
  });
});

describe('cache-signal-inert from behaviour', () => {
  // one server takes every request: chance models from load shares reach 1, so they cannot tell a sticky cache-aware
  // router from a blind one; the in-flight counts can (the busy holder wins the decisions a load-only router loses)
  const concentrated = quietDecisions({
    oracleBest: 590,
    notOracleBest: 0,
    oracleBestByChance: 197,
    oracleBestByLoadShare: 590,
    sticky: 500,
    stickinessByLoadShare: 1,
    topServerShare: 1,
    topServer: 'ctx0',
    preference: {
      truth: {
        away: { decisions: 540, holderChosen: 540, blindExpected: 180 },
        tie: { decisions: 40, holderChosen: 40, blindExpected: 13 },
      },
      turn: {
        away: { decisions: 480, holderChosen: 480, blindExpected: 160 },
        tie: { decisions: 20, holderChosen: 20, blindExpected: 7 },
      },
    },
  });
  it('a healthy router sending everything to one server is load-concentrated, never inert', () => {
    expect(
      firing(
        quietInput({
          decisions: concentrated,
          servers: [
            quietServer('ctx0', { meanInflight: 40 }),
            quietServer('ctx1', { meanInflight: 0 }),
            quietServer('ctx2', { meanInflight: 0 }),
          ],
        }),
      ),
    ).toEqual(['load-concentrated']);
  });
  it('logs only (no load reports): a chance model at 1 cannot judge, so no page either', () => {
    const logs = quietInput({
      seesWorkerEvents: false,
      routerPollsExpected: false,
      decisions: { ...concentrated, withKeys: 0, oracleBest: 0, notOracleBest: 0, preference: NO_PREFERENCE },
      servers: ['ctx0', 'ctx1', 'ctx2'].map((s) => quietServer(s, { meanInflight: null })),
    });
    expect(firing(logs)).not.toContain('cache-signal-inert');
    expect(firing(logs)).toContain('load-concentrated');
  });
  it('a load-only router is inert: it never picks a busier holder and picks holders among ties only as often as chance', () => {
    const hit = runRules(
      RULES,
      quietInput({ decisions: quietDecisions({ preference: BLIND_PREFERENCE, oracleBest: 200, notOracleBest: 390 }) }),
    ).hits.get('cache-signal-inert');
    expect(hit?.summary).toMatch(/busier than the least-loaded server, the router chose it 1\.0% of the time/);
    expect(hit?.evidence.truth_away_blind_rate).toBe(0.335);
  });
  it('a router that follows prefixes only on ties (load term dominating) is not inert', () => {
    const tiesOnly = {
      ...BLIND_PREFERENCE,
      truth: { ...BLIND_PREFERENCE.truth, tie: { decisions: 150, holderChosen: 148, blindExpected: 70 } },
    };
    expect(firing(quietInput({ decisions: quietDecisions({ preference: tiesOnly }) }))).not.toContain(
      'cache-signal-inert',
    );
  });
  it('predicted matches ≡ 0 do not make a router that visibly follows prefixes inert (our model of its table is wrong)', () => {
    expect(firing(quietInput({ decisions: quietDecisions({ predictedAnyMatch: 0 }) }))).not.toContain(
      'cache-signal-inert',
    );
  });
});

describe('load-concentrated', () => {
  it('stays quiet at uneven but spread load (a load-only router on servers of different speed)', () => {
    expect(firing(quietInput({ decisions: quietDecisions({ topServerShare: 0.57 }) }))).toEqual([]);
  });
  it('stays quiet when the server taking most requests holds fewer in flight than the others (it finishes faster)', () => {
    const skewed = quietDecisions({ topServer: 'ctx1', topServerShare: 0.675 });
    const servers = (top: number) => [
      quietServer('ctx0', { meanInflight: 9.7 }),
      quietServer('ctx1', { meanInflight: top }),
      quietServer('ctx2', { meanInflight: 9.7 }),
    ];
    expect(firing(quietInput({ decisions: skewed, servers: servers(0.8) }))).toEqual([]);
    expect(firing(quietInput({ decisions: skewed, servers: servers(20) }))).toEqual(['load-concentrated']);
  });
});

describe('turn-scatter-high', () => {
  it('ignores scatter no routing could have avoided (prefixes evicted everywhere)', () => {
    expect(firing(quietInput({ decisions: quietDecisions({ scattered: 60, avoidableScattered: 5 }) }))).toEqual([]);
  });
});

describe('router tokens_per_block unknown or inferred', () => {
  const unknown = {
    ...quietInput().router,
    blockSize: null,
    tokensPerBlockCandidates: [32, 128],
  };
  it('tokens-per-block-mismatch never claims a mismatch on an unknown chunk size, and names an inferred one', () => {
    expect(firing(quietInput({ router: unknown }))).toEqual([]);
    const inferred = runRules(
      RULES,
      quietInput({
        router: { ...unknown, blockSize: inferredRouterBlockSize(32), tokensPerBlockCandidates: [] },
      }),
    );
    expect(inferred.hits.get('tokens-per-block-mismatch')!.evidence.router_tokens_per_block_from).toBe(
      'inferred from its routing',
    );
  });
  it('cache-signal-inert reads "predicted ≡ 0" as "under every candidate" and says so', () => {
    const hit = runRules(
      RULES,
      quietInput({
        router: unknown,
        decisions: quietDecisions({ predictedAnyMatch: 0, preference: BLIND_PREFERENCE }),
      }),
    ).hits.get('cache-signal-inert');
    expect(hit!.summary).toContain('under every tokens_per_block it may use (32, 128)');
    expect(hit!.evidence.router_tokens_per_block).toBe('unknown (predicted under each of 32/128)');
  });
  it('router-hash-divergence (choices contradict the replica) names the chunk size as a cause while it is unknown', () => {
    const contradicted = quietDecisions({ agreesWithReplica: 100 });
    const withSize = runRules(RULES, quietInput({ decisions: contradicted })).hits.get('router-hash-divergence');
    expect(withSize!.fix).not.toContain('tokens_per_block');
    const hit = runRules(RULES, quietInput({ router: unknown, decisions: contradicted })).hits.get(
      'router-hash-divergence',
    );
    expect(hit!.summary).toContain("no source states the router's tokens_per_block");
    expect(hit!.fix).toMatch(/^router_args\.tokens_per_block: 128 if the router's differs/);
    // an inferred size may be stale (the router reconfigured since): still named
    const inferred = runRules(
      RULES,
      quietInput({
        router: { ...unknown, blockSize: inferredRouterBlockSize(128), tokensPerBlockCandidates: [] },
        decisions: contradicted,
      }),
    ).hits.get('router-hash-divergence');
    expect(inferred!.summary).toContain('128 was inferred from its earlier routing');
    expect(inferred!.fix).toMatch(/^router_args\.tokens_per_block: 128 if the router's differs/);
  });
});

describe('evidence-insufficient', () => {
  const noEvidence = quietDecisions({
    preference: NO_PREFERENCE,
    oracleBest: 0,
    notOracleBest: 0,
    followups: 0,
    sticky: 0,
    predictedAnyMatch: 590,
  });
  it('fires when nothing shows routing either way, naming what is missing and how to provide it', () => {
    const hit = runRules(RULES, quietInput({ decisions: { ...noEvidence, decisions: 20, withKeys: 20 } })).hits.get(
      'evidence-insufficient',
    );
    expect(hit?.summary).toContain('only 20 routing decisions in the window (60 needed)');
    expect(hit?.fix).toContain('--duration');
  });
  it('names unreadable requests by reason with the fix for each', () => {
    const blind = servers({ unreadableRequests: { unknown_encoding: 200, malformed: 0, too_large: 0, no_prompt: 0 } });
    const hit = runRules(RULES, quietInput({ servers: blind, decisions: { ...noEvidence, withKeys: 0 } })).hits.get(
      'evidence-insufficient',
    );
    expect(hit?.summary).toContain('600 CTX requests the relay could not read (unknown_encoding 600)');
    expect(hit?.fix).toContain('without Content-Encoding');
  });
  it('names unhashable requests and missing in-flight counts', () => {
    const hit = runRules(RULES, quietInput({ decisions: { ...noEvidence, withKeys: 0, inflightReports: 0 } })).hits.get(
      'evidence-insufficient',
    );
    expect(hit?.summary).toContain('no request could be hashed');
    expect(hit?.summary).toContain('no in-flight counts');
    expect(hit?.fix).toContain('relay mode');
  });
  it('stays quiet when routing visibly follows prefixes, and when it is inert (that finding says it)', () => {
    expect(firing(quietInput())).not.toContain('evidence-insufficient');
    const inert = firing(quietInput({ decisions: quietDecisions({ preference: BLIND_PREFERENCE }) }));
    expect(inert).toContain('cache-signal-inert');
    expect(inert).not.toContain('evidence-insufficient');
  });
});

describe('a dead event path', () => {
  const eventsOff = servers({
    ...EVENTS_OFF,
    replicaBlocks: 0,
    hashChecks: { match: 0, mismatch: 0, unverifiable: 0 },
  });
  const nothingShown = quietDecisions({
    preference: NO_PREFERENCE,
    oracleBest: 0,
    notOracleBest: 0,
    oracleAnyMatch: 0,
    predictedAnyMatch: 0,
    followups: 0,
    sticky: 0,
  });
  it('with a router known not to fill its own table (2026-06, backfill off): inert before behaviour shows it', () => {
    const hit = runRules(RULES, quietInput({ servers: eventsOff, decisions: nothingShown })).hits.get(
      'cache-signal-inert',
    );
    expect(hit?.summary).toContain('no KV event ever came out');
    expect(hit?.summary).toContain('its score is load-only');
  });
  it('with the profile unknown (it may track routed blocks): unknown, never inert, on a guess', () => {
    const router = {
      ...quietInput().router,
      profile: null,
      profileFrom: null,
      trackRoutedBlocks: null,
      fillsOwnTable: null,
    };
    const ids = firing(quietInput({ router, servers: eventsOff, decisions: nothingShown }));
    expect(ids).not.toContain('cache-signal-inert');
    expect(ids).toContain('evidence-insufficient');
  });
  it('event-signal-masked: the newest router tracks routed blocks and routing follows prefixes; names what is lost', () => {
    const router = {
      ...quietInput().router,
      ...KNOWN_2026_06,
      profile: 'newest' as const,
      trackRoutedBlocks: true,
      fillsOwnTable: true,
      loadWeight: 0.25,
    };
    const hit = runRules(RULES, quietInput({ router, servers: eventsOff })).hits.get('event-signal-masked');
    expect(hit?.summary).toContain('routed-block tracking');
    expect(hit?.cause).toContain('warm table after a router restart');
    expect(hit?.fix).toContain('event_buffer_max_size');
    expect(firing(quietInput({ router, servers: eventsOff }))).not.toContain('cache-signal-inert');
  });
  it('event-signal-masked from EVENT_MATCH_DIAG: matches, none from events', () => {
    const diag = { calls: 40, totalMatched: 38, eventMatched: 0, eventBlocks: 0, totalBlocks: 900 };
    const hit = runRules(RULES, quietInput({ servers: servers({ eventMatchDiag: diag }) })).hits.get(
      'event-signal-masked',
    );
    expect(hit?.summary).toContain('EVENT_MATCH_DIAG reports matches on 114 of 120 calls, none from events');
  });
});

describe('load-term-dominates per router profile', () => {
  it('the newest router: names load_weight with a computed value', () => {
    const router = { ...quietInput().router, profile: 'newest' as const, loadWeight: 4 };
    // 600 outcomes of 10 000-token prompts, the busiest server at 24 active: ¼ of 10 000 / 128 = 19.5 blocks / 24
    const hit = runRules(RULES, quietInput({ router, decisions: quietDecisions({ sentAwayByLoad: 40 }) })).hits.get(
      'load-term-dominates',
    );
    expect(hit?.fix).toMatch(/^router_args\.load_weight: 0\.813 \(now 4/);
    expect(hit?.cause).toContain('load_weight');
  });
  it('behaviour alone: holders chosen when loads tie, never when busier', () => {
    const tiesOnly = {
      ...BLIND_PREFERENCE,
      truth: { ...BLIND_PREFERENCE.truth, tie: { decisions: 150, holderChosen: 148, blindExpected: 70 } },
    };
    const hit = runRules(RULES, quietInput({ decisions: quietDecisions({ preference: tiesOnly }) })).hits.get(
      'load-term-dominates',
    );
    expect(hit?.summary).toContain(
      '99% of 150 decisions where loads tied, but on 1% of 200 where the holder was busier',
    );
    expect(hit?.fix).toContain('router_args.max_batch_size');
  });
});
