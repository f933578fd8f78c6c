import { describe, expect, it } from 'vitest';
import {
  BLIND_PREFERENCE,
  EVENTS_OFF,
  NO_PREFERENCE,
  firing,
  quietDecisions,
  quietInput,
  quietServer,
  servers,
} from '../../../../test/helpers/diagnosis-input.js';
import { FINDING_IDS } from '../finding-catalog.js';
import type { DiagnosisInput, Rule } from '../rule.js';
import { runRules } from '../run-rules.js';
import { RULES } from './index.js';

/** decisions whose router keys no server holds, while the workers reuse prefixes */
function routerKeysNeverFound(): DiagnosisInput['decisions'] {
  return quietDecisions({
    firstBlockHeld: 0,
    oracleAnyMatch: 0,
    predictedAnyMatch: 0,
    oracleBest: 0,
    notOracleBest: 0,
    noPrefix: 600,
    joinedOracleCachedTokens: 0,
  });
}

/** ranks 0–3 each stating 200 events without a gap: a server whose every rank reports */
function fourRanksWithEvents(): DiagnosisInput['servers'][number]['ranks'] {
  const quietRank = quietServer('ctx0').ranks[0]!;
  return [0, 1, 2, 3].map((rank) => ({ ...quietRank, rank, stated: true, events: 200, lastEventId: 199 }));
}

describe('rules', () => {
  it('has exactly one rule per catalog id, in catalog order', () => {
    expect(RULES.map((r) => r.id)).toEqual(FINDING_IDS);
  });

  it('a finding names only servers the input knows (no phantom server from a log token)', () => {
    const phantom: Rule = {
      id: 'router-not-polling',
      evaluate: (input) => ({
        servers: [']', input.servers[0]!.server],
        summary: 's',
        evidence: {},
        cause: 'c',
        fix: 'f',
      }),
    };
    const run = runRules([phantom], quietInput());
    expect(run.hits.get('router-not-polling')?.servers).toEqual([quietInput().servers[0]!.server]);
  });

  it('a quiet healthy input fires nothing', () => {
    const run = runRules(RULES, quietInput());
    expect(run.errors).toEqual([]);
    expect([...run.hits.keys()]).toEqual([]);
  });

  const cases: { name: string; input: DiagnosisInput; expected: string[] }[] = [
    {
      name: 'events-absent: requests served, no event drained',
      input: quietInput({
        servers: servers({
          ...EVENTS_OFF,
          hashChecks: { match: 0, mismatch: 0, unverifiable: 0 },
          realisedAboveOracle: 0,
        }),
        decisions: quietDecisions({
          predictedAnyMatch: 0,
          oracleAnyMatch: 0,
          firstBlockHeld: 0,
          oracleBest: 0,
          notOracleBest: 0,
          noPrefix: 600,
          oracleBestByChance: 0,
        }),
      }),
      // the quiet input's router still follows prefixes: a dead event path under it is masked
      expected: ['events-absent', 'event-signal-masked'],
    },
    {
      name: 'event-queue-shared: gaps',
      input: quietInput({
        servers: [quietServer('ctx0', { gaps: 40, missedEvents: 400 }), quietServer('ctx1'), quietServer('ctx2')],
      }),
      expected: ['event-queue-shared'],
    },
    {
      name: 'router-not-polling: outcomes but zero polls',
      input: quietInput({ servers: servers({ routerPolls: 0, routerPollsTotal: 0, replicaBlocks: 0 }) }),
      // the quiet input's router still follows prefixes: a dead event path under it is masked
      expected: ['router-not-polling', 'event-signal-masked'],
    },
    {
      name: 'events-partial-ranks: one server shows fewer ranks than the others',
      input: quietInput({
        servers: [
          quietServer('ctx0', {
            ranks: [{ rank: 0, stated: true, events: 300, gaps: 0, missedEvents: 0, resets: 0, lastEventId: 299 }],
          }),
          ...['ctx1', 'ctx2'].map((s) =>
            quietServer(s, {
              ranks: fourRanksWithEvents(),
            }),
          ),
        ],
      }),
      expected: ['events-partial-ranks'],
    },
    {
      name: 'events-partial-ranks: only rank 0 everywhere, served requests reuse unannounced blocks',
      input: quietInput({
        servers: servers({
          ranks: [{ rank: 0, stated: true, events: 300, gaps: 0, missedEvents: 0, resets: 0, lastEventId: 299 }],
          realisedAboveOracle: 150,
        }),
      }),
      expected: ['events-partial-ranks'],
    },
    {
      name: 'events-partial-ranks: every rank shows events; requests reusing unannounced blocks (late drains) are no lost rank',
      input: quietInput({
        servers: servers({
          ranks: fourRanksWithEvents(),
          realisedAboveOracle: 150,
        }),
      }),
      expected: [],
    },
    {
      name: 'event-stream-reset: info',
      input: quietInput({ servers: [quietServer('ctx0', { resets: 1 }), quietServer('ctx1'), quietServer('ctx2')] }),
      expected: ['event-stream-reset'],
    },
    {
      name: 'hash-mismatch',
      input: quietInput({
        servers: servers({
          hashChecks: { match: 0, mismatch: 800, unverifiable: 0 },
          alternativeHashAlgo: 'v2_sha256_64',
        }),
      }),
      expected: ['hash-mismatch'],
    },
    {
      name: 'tokens-per-block-mismatch: router 32 vs workers 128',
      input: quietInput({
        router: { ...quietInput().router, blockSize: { tokens: 32, basis: 'logged', from: 'simulator' } },
      }),
      // the quiet input's router still follows prefixes: a dead event path under it is masked
      expected: ['tokens-per-block-mismatch', 'event-signal-masked'],
    },
    {
      name: 'router-hash-divergence: workers reuse, router keys never found',
      input: quietInput({
        decisions: routerKeysNeverFound(),
      }),
      expected: ['router-hash-divergence'],
    },
    {
      // vLLM / SGLang tenants' cache_salt: the prompts reach kvsentinel without it, so their keys cannot match
      name: 'no router-hash-divergence when most stored blocks are scoped by salts the prompts do not show',
      input: quietInput({
        servers: servers({ streamStoredBlocks: 1000, streamScopedBlocks: 900 }),
        decisions: routerKeysNeverFound(),
      }),
      expected: [],
    },
    {
      name: 'router-table-empty via the debug endpoint',
      input: quietInput({
        seesRouterDebug: true,
        servers: servers({ routerState: { ts: 1, blockTableSize: 0, activeRequests: 3, polls: 10, pollFailures: 0 } }),
      }),
      expected: ['router-table-empty'],
    },
    {
      name: 'cache-signal-inert: predicted ≡ 0 while truth holds prefixes, oracle-best at chance',
      input: quietInput({
        decisions: quietDecisions({
          predictedAnyMatch: 0,
          oracleBest: 200,
          notOracleBest: 390,
          oracleBestByChance: 210,
          sticky: 170,
          scattered: 10,
          preference: BLIND_PREFERENCE,
        }),
      }),
      expected: ['cache-signal-inert'],
    },
    {
      name: 'cache-signal-inert from logs only: stickiness at 1/N',
      input: quietInput({
        seesWorkerEvents: false,
        seesRouterPolls: false,
        routerPollsExpected: false,
        servers: servers({
          drains: 0,
          events: 0,
          eventsTotal: 0,
          routerPolls: 0,
          routerPollsTotal: 0,
          joinedOutcomes: 0,
          realisedAboveOracle: 0,
          truthBlocks: 0,
        }),
        decisions: quietDecisions({
          withKeys: 0,
          predictedAnyMatch: 0,
          oracleAnyMatch: 0,
          firstBlockHeld: 0,
          oracleBest: 0,
          notOracleBest: 0,
          noPrefix: 0,
          oracleBestByChance: 0,
          sticky: 170,
          joinedPromptTokens: 0,
          joinedCachedTokens: 0,
          joinedOracleCachedTokens: 0,
          stickyIdealCachedTokens: 5_750_000,
          preference: NO_PREFERENCE,
        }),
      }),
      expected: ['cache-signal-inert'],
    },
    {
      name: 'load-term-dominates: active requests above max_batch_size',
      input: quietInput({
        router: { ...quietInput().router, maxBatchSize: 64 },
        servers: servers({ meanInflight: 128 }),
        decisions: quietDecisions({ meanMaxInflight: 135 }),
      }),
      expected: ['load-term-dominates'],
    },
    {
      name: 'turn-scatter-high',
      input: quietInput({
        decisions: quietDecisions({ scattered: 60, avoidableScattered: 55, avoidableScatterLostTokens: 400_000 }),
      }),
      expected: ['turn-scatter-high'],
    },
    {
      name: 'hit-rate-below-oracle',
      input: quietInput({ decisions: quietDecisions({ joinedCachedTokens: 5_200_000 }) }),
      expected: ['hit-rate-below-oracle'],
    },
    {
      name: 'source-unreachable after the grace period',
      input: quietInput({
        sources: [
          {
            source: 'relay:ctx1',
            up: false,
            error: 'ECONNREFUSED',
            downSince: 500_000,
            lastFailure: 590_000,
            failures: 90,
          },
        ],
      }),
      expected: ['source-unreachable'],
    },
  ];

  it.each(cases)('$name', ({ input, expected }) => {
    expect(firing(input)).toEqual(expected);
  });

  it('thin evidence fires nothing: 10 requests per server, everything broken', () => {
    const thin = quietInput({
      servers: servers({
        requests: 10,
        outcomes: 10,
        events: 0,
        eventsTotal: 0,
        routerPolls: 0,
        joinedOutcomes: 10,
        realisedAboveOracle: 5,
      }),
      decisions: quietDecisions({
        decisions: 30,
        withKeys: 30,
        predictedAnyMatch: 0,
        oracleBest: 5,
        notOracleBest: 20,
        oracleBestByChance: 9,
        followups: 20,
        sticky: 6,
        followupsWithOutcome: 20,
        scattered: 10,
      }),
    });
    expect(firing(thin)).toEqual([]);
  });

  it('a conversation router is never blamed for the event path it does not use', () => {
    const input = quietInput({
      router: {
        type: 'conversation',
        source: 'simulator',
        blockSize: { tokens: 128, basis: 'logged', from: 'simulator' },
        tokensPerBlockCandidates: [],
        maxBatchSize: null,
        backfillBlockHashesOnFinish: null,
        consumesEvents: false,
        readsEvents: 'none',
        readsEventsFrom: 'router type',
        profile: null,
        profileFrom: null,
        trackRoutedBlocks: null,
        loadWeight: null,
        loadCap: null,
        fillsOwnTable: null,
      },
      servers: servers({ events: 0, eventsTotal: 0, routerPolls: 0, routerPollsTotal: 0 }),
      decisions: quietDecisions({ predictedAnyMatch: 0 }),
    });
    expect(firing(input)).toEqual([]);
  });

  it('every hit carries a cause and a fix naming a configuration key (info findings need no change)', () => {
    for (const { input, expected } of cases) {
      const run = runRules(RULES, input);
      for (const id of expected.filter((x) => x !== 'event-stream-reset')) {
        const hit = run.hits.get(id as never)!;
        expect(hit.cause.length).toBeGreaterThan(10);
        expect(hit.fix).toMatch(/[a-z_]+\.[a-z_]+|--[a-z]/);
        expect(hit.summary.length).toBeGreaterThan(10);
      }
    }
  });

  it('load-term-dominates recommends max_batch_size from the observed active requests', () => {
    const input = quietInput({
      router: { ...quietInput().router, maxBatchSize: 64 },
      servers: servers({ meanInflight: 128 }),
      decisions: quietDecisions({ meanMaxInflight: 128 }),
    });
    expect(runRules(RULES, input).hits.get('load-term-dominates')!.fix).toContain('router_args.max_batch_size: 512');
  });

  it("tokens-per-block-mismatch names the workers' block size as the fix", () => {
    const input = quietInput({
      router: { ...quietInput().router, blockSize: { tokens: 32, basis: 'logged', from: 'simulator' } },
    });
    expect(runRules(RULES, input).hits.get('tokens-per-block-mismatch')!.fix).toContain(
      'router_args.tokens_per_block: 128',
    );
  });

  it('a throwing rule becomes an error count, the others still run', () => {
    const broken = {
      id: 'hash-mismatch' as const,
      evaluate: (): never => {
        throw new Error('boom');
      },
    };
    const run = runRules(
      [broken, ...RULES.filter((r) => r.id !== 'hash-mismatch')],
      quietInput({
        decisions: quietDecisions({ scattered: 60, avoidableScattered: 60, avoidableScatterLostTokens: 400_000 }),
      }),
    );
    expect(run.errors).toEqual([{ id: 'hash-mismatch', message: 'boom' }]);
    expect([...run.hits.keys()]).toEqual(['turn-scatter-high']);
  });
});
