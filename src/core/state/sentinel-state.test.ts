import { describe, expect, it } from 'vitest';
import { RULES } from '../diagnosis/rules/index.js';
import { miniCluster, type MiniOptions } from '../../../test/helpers/mini-cluster.js';
import { auditMiniCluster } from '../../../test/helpers/mini-cluster-audit.js';
import { buildAuditReport } from '../report/audit-report.js';
import type { DecisionJoin, OutcomeJoin } from './joined-events.js';
import type { HysteresisOptions } from '../diagnosis/finding-hysteresis.js';
import { createSentinelState, type SentinelOptions, type SentinelState } from './sentinel-state.js';

/** a decision without prompt ids: each case adds the time, id and server (and a count or why it is unreadable) */
const PROMPTLESS_DECISION = {
  kind: 'decision',
  correlationId: null,
  promptTokens: null,
  promptTokenCount: null,
  inflight: null,
} as const;

function audit(mini: MiniOptions, options: SentinelOptions = {}) {
  return auditMiniCluster(mini, {
    thresholds: { minDecisions: 40, minFollowups: 30, minServerRequests: 10 },
    ...options,
  });
}

/** A relay source down from t = 0, judged by the source rule alone (with no traffic evidence-insufficient would hold too). */
function sourceDown(hysteresis: HysteresisOptions): SentinelState {
  const state = createSentinelState({
    hysteresis,
    thresholds: { sourceDownMs: 0 },
    rules: RULES.filter((r) => r.id === 'source-unreachable'),
  });
  state.apply({ kind: 'source-health', ts: 0, source: 'relay:ctx0', up: false, error: 'ECONNREFUSED' });
  return state;
}

describe('sentinel state joins', () => {
  it('healthy sticky routing: predicted = oracle, chosen is the oracle best, no findings', () => {
    const { snapshot, input } = audit({ routing: 'sticky' });
    expect(snapshot.findings.map((f) => f.id)).toEqual([]);
    expect(snapshot.verdict).toBe('healthy');
    const d = input.decisions;
    expect(d.withKeys).toBe(240);
    // follow-ups always return to their prefix; only a first turn can miss a server that already holds the
    // shared system prefix (the first turns are placed at random)
    expect(d.oracleBest + d.notOracleBest + d.noPrefix).toBe(240);
    expect(d.notOracleBest).toBeLessThanOrEqual(3);
    expect(d.oracleBest / (d.oracleBest + d.notOracleBest)).toBeGreaterThan(0.98);
    expect(d.predictedAnyMatch).toBe(d.oracleAnyMatch);
    expect(d.agreesWithReplica).toBeGreaterThan(200);
    expect(d.followups).toBe(200);
    expect(d.sticky).toBe(200);
    // realised cached equals the oracle except for first turns placed away from the system prefix (2 blocks of 4)
    expect(d.joinedCachedTokens).toBe(d.joinedOracleCachedTokens - 8 * d.notOracleBest);
    expect(snapshot.cacheHitRatio).toBeCloseTo(snapshot.oracleHitRatio!, 2);
    expect(snapshot.servers.every((s) => s.hashChecks.mismatch === 0 && s.hashChecks.match > 0)).toBe(true);
    expect(snapshot.turnScatterRatio).toBe(0);
  });

  it('random routing with a live table: chosen is the oracle best about 1/N of the time → cache-signal-inert', () => {
    const { snapshot, input } = audit({ routing: 'random', trajectories: 60 });
    const d = input.decisions;
    const rate = d.oracleBest / (d.oracleBest + d.notOracleBest);
    expect(rate).toBeLessThan(0.6);
    expect(snapshot.findings.map((f) => f.id)).toContain('cache-signal-inert');
    expect(snapshot.verdict).toBe('inert');
    expect(snapshot.stickiness).toBeLessThan(0.5);
  });

  it('events absent: relay sees polls but never an event', () => {
    const { snapshot } = audit({ routing: 'random', events: false, trajectories: 60 });
    const ids = snapshot.findings.map((f) => f.id);
    expect(ids).toContain('events-absent');
    expect(ids).toContain('cache-signal-inert');
    expect(snapshot.findings.find((f) => f.id === 'events-absent')!.fix).toMatch(
      /kv_cache_config\.event_buffer_max_size: \d+/,
    );
  });

  it('router tokens_per_block ≠ worker block size: predicted matches ≡ 0 while the oracle sees prefixes', () => {
    const { snapshot, input } = audit({ routing: 'random', routerTokensPerBlock: 8, trajectories: 60 });
    expect(input.decisions.predictedAnyMatch).toBe(0);
    expect(input.decisions.oracleAnyMatch).toBeGreaterThan(0);
    const ids = snapshot.findings.map((f) => f.id);
    expect(ids).toContain('tokens-per-block-mismatch');
    expect(ids).toContain('cache-signal-inert');
    expect(ids).not.toContain('router-hash-divergence');
  });

  it('router prompt drift: router keys never meet worker blocks although workers reuse', () => {
    const { snapshot } = audit({ routing: 'random', drift: true, trajectories: 60 });
    const ids = snapshot.findings.map((f) => f.id);
    expect(ids).toContain('router-hash-divergence');
    expect(ids).not.toContain('tokens-per-block-mismatch');
  });

  it('event ids skipped: event-queue-shared with the missing count', () => {
    const { snapshot } = audit({ routing: 'sticky', stolenEvery: 3 });
    const finding = snapshot.findings.find((f) => f.id === 'event-queue-shared');
    expect(finding).toBeDefined();
    expect(Number(finding!.evidence.missed_events)).toBe(2 * Number(finding!.evidence.gaps));
  });

  it('router never polls: router-not-polling, and the replica stays empty', () => {
    const { snapshot } = audit({ routing: 'random', routerPolls: false, trajectories: 60 });
    expect(snapshot.findings.map((f) => f.id)).toContain('router-not-polling');
    expect(snapshot.servers.every((s) => s.routerTableBlocks === 0)).toBe(true);
  });

  it('conversation router without polls is not blamed for the event path', () => {
    const { snapshot } = audit({ routing: 'sticky', routerPolls: false, routerType: 'conversation' });
    expect(snapshot.findings).toEqual([]);
  });

  it('bounded memory: trajectories beyond the cap are evicted and counted', () => {
    const { snapshot } = audit({ routing: 'sticky', trajectories: 50, turns: 2 }, { limits: { trajectories: 10 } });
    expect(snapshot.dropped.trajectoriesEvicted).toBe(90);
  });

  it('bounded memory: block tables capped per server, the evictions in the server stats', () => {
    const free = audit({ routing: 'sticky' }).snapshot;
    const { snapshot } = audit({ routing: 'sticky' }, { limits: { tableBlocksPerServer: 8 } });
    for (const s of snapshot.servers) {
      const blocks = s.ranks.reduce((n, r) => n + Object.values(r.blocksByLevel).reduce((a, b) => a + b, 0), 0);
      expect(blocks).toBeLessThanOrEqual(8);
      expect(s.routerTableBlocks).toBeLessThanOrEqual(8);
    }
    expect(snapshot.servers.some((s) => s.workerTableBlocksEvicted > 0 && s.routerTableBlocksEvicted > 0)).toBe(true);
    expect(free.servers.every((s) => s.workerTableBlocksEvicted === 0 && s.routerTableBlocksEvicted === 0)).toBe(true);
  });

  it('bounded memory: observations about servers past the server cap are ignored and counted', () => {
    const state = createSentinelState({ limits: { servers: 2 } });
    const decision = (requestId: string, server: string, inflight: Record<string, number> | null = null) =>
      state.apply({
        kind: 'decision',
        ts: 1,
        requestId,
        correlationId: null,
        server,
        promptTokens: null,
        promptTokenCount: 10,
        inflight,
      });
    decision('a', 'ctx0');
    decision('b', 'ctx1', { ctx0: 1, ctx1: 0, ctx9: 4 });
    decision('c', 'ctx2');
    state.apply({
      kind: 'router-config',
      ts: 2,
      source: 'config',
      routerType: null,
      tokensPerBlock: null,
      maxBatchSize: null,
      backfillBlockHashesOnFinish: null,
      servers: ['ctx0', 'ctx3'],
    });
    state.apply({
      kind: 'outcome',
      ts: 3,
      requestId: 'c',
      server: 'ctx2',
      ok: true,
      promptTokens: 10,
      cachedTokens: 0,
      latencyMs: 1,
    });
    const snap = state.evaluate(3);
    expect(snap.servers.map((s) => s.server).sort()).toEqual(['ctx0', 'ctx1']);
    expect(snap.requests).toBe(2);
    expect(snap.dropped.serverObservationsIgnored).toBe(2);
  });

  it('pending decisions expire after their TTL and are counted', () => {
    const state = createSentinelState({ limits: { pendingTtlMs: 1000 } });
    state.apply({ ...PROMPTLESS_DECISION, ts: 0, requestId: 'a', server: 'ctx0', promptTokenCount: 10 });
    state.apply({ ...PROMPTLESS_DECISION, ts: 5000, requestId: 'b', server: 'ctx0', promptTokenCount: 10 });
    state.apply({
      kind: 'outcome',
      ts: 5001,
      requestId: 'a',
      server: 'ctx0',
      ok: true,
      promptTokens: 10,
      cachedTokens: 0,
      latencyMs: 1,
    });
    const snap = state.evaluate(5001);
    expect(snap.dropped.pendingDecisionsExpired).toBe(1);
    expect(snap.dropped.outcomesWithoutDecision).toBe(1);
  });

  it('hysteresis: a finding needs onAfter evaluations to turn on and offAfter to turn off', () => {
    const state = sourceDown({ onAfter: 2, offAfter: 2 });
    expect(state.evaluate(1).findings).toEqual([]);
    const on = state.evaluate(2).findings;
    expect(on.map((f) => f.id)).toEqual(['source-unreachable']);
    expect(on[0]!.since).toBe(1);
    state.apply({ kind: 'source-health', ts: 3, source: 'relay:ctx0', up: true, error: null });
    expect(state.evaluate(4).findings.map((f) => f.id)).toEqual(['source-unreachable']);
    expect(state.evaluate(5).findings).toEqual([]);
  });

  it('reads never evaluate: any number of snapshots between evaluations leave findings and hysteresis as they were', () => {
    const quiet = sourceDown({ onAfter: 3, offAfter: 2 });
    const scraped = sourceDown({ onAfter: 3, offAfter: 2 });
    // before the first evaluation: nothing found, and no all-clear either
    expect(scraped.snapshot(0)).toMatchObject({ findings: [], verdict: 'unknown' });
    const seen = (state: SentinelState, t: number): string[] => state.evaluate(t).findings.map((f) => f.id);
    for (let t = 1; t <= 4; t++) {
      // one scraper against many: the many read 50 times between evaluations, the rules have held all along
      for (let i = 0; i < 50; i++) expect(scraped.snapshot(t - 0.5).findings).toEqual(quiet.snapshot(t - 0.5).findings);
      expect(seen(scraped, t)).toEqual(seen(quiet, t));
    }
    // three evaluations turned it on (at 3), however many reads came between them
    expect(scraped.snapshot(5).findings.map((f) => [f.id, f.since])).toEqual([['source-unreachable', 1]]);
    expect(scraped.snapshot(5)).toEqual(quiet.snapshot(5));
    expect(scraped.lastEvaluation()).toEqual(quiet.lastEvaluation());
  });

  it('rulesAt says what the rules hold now without hysteresis, and changes nothing', () => {
    const state = sourceDown({ onAfter: 2, offAfter: 2 });
    const now = state.rulesAt(1);
    expect(now.findings.map((f) => [f.id, f.since])).toEqual([['source-unreachable', 1]]);
    expect(now.verdict).toBe('degraded');
    for (let i = 0; i < 5; i++) state.rulesAt(2 + i);
    expect(state.lastEvaluation()).toBeNull();
    // the first evaluation is still the first: not on yet
    expect(state.evaluate(10).findings).toEqual([]);
    expect(state.evaluate(11).findings.map((f) => [f.id, f.since])).toEqual([['source-unreachable', 10]]);
  });

  it('a windowed state forgets old evidence', () => {
    const state = createSentinelState({ windowMs: 10_000, thresholds: { minServerRequests: 5 } });
    for (const obs of miniCluster({ routing: 'random', events: false, trajectories: 10, turns: 2 })) state.apply(obs);
    expect(state.evaluate(2100).findings.map((f) => f.id)).toContain('events-absent');
    expect(state.evaluate(60_000).findings.map((f) => f.id)).not.toContain('events-absent');
  });
});

describe('the joined-event stream for the live feed', () => {
  it('reports each decision with per-server predicted/oracle tokens and each outcome with its oracle', () => {
    const decisions: DecisionJoin[] = [];
    const outcomes: OutcomeJoin[] = [];
    const state = createSentinelState();
    state.subscribe((e) => (e.kind === 'decision' ? decisions.push(e.join) : e.join !== null && outcomes.push(e.join)));
    for (const obs of miniCluster({ routing: 'sticky', trajectories: 3, turns: 3 })) state.apply(obs);
    expect(decisions).toHaveLength(9);
    expect(outcomes).toHaveLength(9);
    const followup = decisions.filter((d) => d.followup);
    expect(followup).toHaveLength(6);
    expect(followup.every((d) => d.sticky === true && d.chosenIsOracleBest === true)).toBe(true);
    const last = followup.at(-1)!;
    const chosen = last.candidates.find((c) => c.server === last.server)!;
    // the router's table (exact replica) and worker truth agree on what the chosen server holds
    expect(chosen.predictedTokens).toBe(chosen.oracleTokens);
    expect(chosen.oracleTokens).toBeGreaterThan(0);
    expect(outcomes.every((o) => o.oracleCachedTokens !== null && o.cachedTokens! <= o.oracleCachedTokens)).toBe(true);
    const followupIds = new Set(followup.map((d) => d.requestId));
    expect(
      outcomes
        .filter((o) => followupIds.has(o.requestId))
        .every((o) => o.cachedTokens === o.oracleCachedTokens && !o.scattered),
    ).toBe(true);
    // token counts only, never token ids
    expect(JSON.stringify(decisions)).not.toMatch(/\[\s*1[12],\s*1[23]/);
  });
});

describe('the exported oracle (per-server oracle cached tokens) follows the diagnosis', () => {
  const sum = (
    snapshot: ReturnType<typeof audit>['snapshot'],
    pick: (s: (typeof snapshot.servers)[number]) => number,
  ): number => snapshot.servers.reduce((n, s) => n + pick(s), 0);

  it("events off: the sticky ideal, so the tokens lost equal hit-rate-below-oracle's", () => {
    const { snapshot, input } = audit({ routing: 'random', events: false, trajectories: 60 }, { mode: 'relay' });
    expect(snapshot.oracleBasis).toBe('sticky-ideal');
    const oracle = sum(snapshot, (s) => s.oracleCachedTokens);
    expect(oracle).toBe(input.decisions.stickyIdealCachedTokens);
    const lost = oracle - sum(snapshot, (s) => s.cachedTokens);
    expect(lost).toBeGreaterThan(0);
    expect(snapshot.findings.find((f) => f.id === 'hit-rate-below-oracle')?.evidence.tokens_lost).toBe(lost);
  });

  it('events on: the oracle-best server from worker truth', () => {
    const { snapshot, input } = audit({ routing: 'random', trajectories: 60 }, { mode: 'relay' });
    expect(snapshot.oracleBasis).toBe('worker-truth');
    const oracle = sum(snapshot, (s) => s.oracleCachedTokens);
    expect(oracle).toBe(input.decisions.joinedOracleCachedTokens);
    expect(snapshot.findings.find((f) => f.id === 'hit-rate-below-oracle')?.evidence.tokens_lost).toBe(
      oracle - sum(snapshot, (s) => s.cachedTokens),
    );
  });
});

describe("sentinel state: text and chat requests (no ids in the request, the worker's ids in the response)", () => {
  it('takes the oracle from worker truth with the worker ids, never below the realised hit', () => {
    const { snapshot, input } = audit({ routing: 'random', promptForm: 'chat', trajectories: 60 });
    const d = input.decisions;
    expect(d.withKeys).toBe(0);
    expect(d.textOrChat).toBe(360);
    expect(d.withWorkerTokens).toBe(360);
    expect(snapshot.oracleBasis).toBe('worker-truth');
    expect(d.joinedOracleCachedTokens).toBeGreaterThan(d.joinedCachedTokens);
    expect(snapshot.oracleHitRatio!).toBeGreaterThan(snapshot.cacheHitRatio!);
    expect(snapshot.tokensLostPerSecond!).toBeGreaterThan(0);
    // random routing lands on the oracle best about 1/N of the time: inert, read from the worker's own ids
    expect(d.oracleBest / (d.oracleBest + d.notOracleBest)).toBeLessThan(0.6);
    const ids = snapshot.findings.map((f) => f.id);
    expect(ids).toContain('cache-signal-inert');
    expect(ids).toContain('hit-rate-below-oracle');
  });

  it('sticky routing of chat requests: the oracle equals the realised hit, no finding', () => {
    const { snapshot, input } = audit({ routing: 'sticky', promptForm: 'chat' });
    expect(snapshot.oracleBasis).toBe('worker-truth');
    expect(input.decisions.joinedOracleCachedTokens).toBeGreaterThanOrEqual(input.decisions.joinedCachedTokens);
    expect(snapshot.oracleHitRatio! - snapshot.cacheHitRatio!).toBeLessThan(0.03);
    expect(snapshot.findings.map((f) => f.id)).toEqual([]);
  });

  it('events off: the sticky ideal counts tokens lost from the usage of text turns', () => {
    const { snapshot } = audit({ routing: 'random', promptForm: 'chat', events: false, trajectories: 60 });
    expect(snapshot.oracleBasis).toBe('sticky-ideal');
    expect(snapshot.tokensLostPerSecond!).toBeGreaterThan(0);
  });

  it('counts unreadable requests per server and reason for the diagnosis', () => {
    const state = createSentinelState();
    state.apply({ ...PROMPTLESS_DECISION, ts: 1, requestId: 'a', server: 'ctx0', unreadable: 'unknown_encoding' });
    state.apply({ ...PROMPTLESS_DECISION, ts: 2, requestId: 'b', server: 'ctx0', unreadable: 'unknown_encoding' });
    state.apply({ ...PROMPTLESS_DECISION, ts: 3, requestId: 'c', server: 'ctx1', unreadable: 'too_large' });
    const servers = state.diagnosisInput(10).servers;
    expect(servers.find((s) => s.server === 'ctx0')?.unreadableRequests).toEqual({
      unknown_encoding: 2,
      malformed: 0,
      too_large: 0,
      no_prompt: 0,
    });
    expect(servers.find((s) => s.server === 'ctx1')?.unreadableRequests.too_large).toBe(1);
  });

  it('a healthy audit still says how many CTX bodies the relay could not read (never silent, never a page)', () => {
    const { state } = audit({ routing: 'sticky' });
    state.apply({
      ...PROMPTLESS_DECISION,
      ts: 10_000_000,
      requestId: 'u1',
      server: 'ctx0',
      unreadable: 'unknown_encoding',
    });
    state.apply({ ...PROMPTLESS_DECISION, ts: 10_000_001, requestId: 'u2', server: 'ctx0', unreadable: 'malformed' });
    const snapshot = state.evaluate(10_000_002);
    expect(snapshot.servers.find((s) => s.server === 'ctx0')?.unreadableRequests).toBe(2);
    const report = buildAuditReport(snapshot, { kind: 'live', description: 'test', observations: 0, malformed: 0 });
    expect(report.findings.filter((f) => f.severity === 'critical')).toEqual([]);
    expect(report.notes.filter((n) => n.startsWith('unreadable requests:'))).toEqual([
      expect.stringMatching(/could not read 2 of \d+ CTX request bodies \(ctx0 2\)/),
    ]);
  });

  it('says nothing of unreadable bodies when every body was read', () => {
    const { snapshot } = audit({ routing: 'sticky' });
    const report = buildAuditReport(snapshot, { kind: 'live', description: 'test', observations: 0, malformed: 0 });
    expect(report.notes.some((n) => n.startsWith('unreadable requests:'))).toBe(false);
  });
});

describe('one report, one set of numbers', () => {
  // the demo's daemon evaluates once a second; its final report read the headline from the counters of the moment
  // and the findings from the evaluation a second before (6,471 against 6,454 requests)
  const observations = miniCluster({ routing: 'random', events: false, trajectories: 60 });
  const half = Math.floor(observations.length / 2);
  const options: SentinelOptions = { thresholds: { minDecisions: 40, minFollowups: 30, minServerRequests: 10 } };

  it('the last evaluation is one set of numbers; a read after more traffic mixes them; evaluate takes a new one', () => {
    const state = createSentinelState(options);
    expect(state.lastEvaluation()).toBeNull();
    for (const obs of observations.slice(0, half)) state.apply(obs);
    const t = observations[half - 1]!.ts;
    const first = state.evaluate(t);
    for (const obs of observations.slice(half)) state.apply(obs);
    // the counters of the moment next to the findings of a second ago: what a report must not show
    const read = state.snapshot(t + 500);
    expect(read.requests).toBeGreaterThan(first.requests);
    expect(read.findings).toBe(first.findings);
    const again = state.lastEvaluation()!;
    expect(again).toBe(first);
    const absent = again.findings.find((f) => f.id === 'events-absent')!;
    expect(absent.evidence['requests']).toBe(again.requests);
    // a new evaluation over everything applied, still one set of numbers
    const final = state.evaluate(t + 500);
    expect(state.lastEvaluation()).toBe(final);
    expect(final.requests).toBeGreaterThan(first.requests);
    expect(final.findings.find((f) => f.id === 'events-absent')!.evidence['requests']).toBe(final.requests);
    const report = buildAuditReport(final, { kind: 'live', description: 'test', observations: 0, malformed: 0 });
    expect(report.stats.requests).toBe(report.findings.find((f) => f.id === 'events-absent')!.evidence['requests']);
  });

  it("events-absent's evidence says what its sentence says: no 'drains 0' next to 'every drain came back []'", () => {
    const { snapshot } = audit({ routing: 'random', events: false, trajectories: 60 });
    const absent = snapshot.findings.find((f) => f.id === 'events-absent')!;
    expect(absent.summary).toMatch(/every drain came back \[\]/);
    expect(absent.evidence).not.toHaveProperty('drains');
    expect(absent.evidence['router_polls']).toBeGreaterThan(0);
    expect(absent.summary).toContain(`each of the router's ${absent.evidence['router_polls']} polls`);
    expect(absent.summary).toContain(`served ${absent.evidence['requests']} requests`);
  });
});
