import { describe, expect, it } from 'vitest';
import { miniCluster, type MiniOptions } from '../../../test/helpers/mini-cluster.js';
import { auditMiniCluster } from '../../../test/helpers/mini-cluster-audit.js';
import { RouterBlockSizeInference } from './router-block-size-inference.js';
import type { DecisionJoin } from './joined-events.js';
import { createSentinelState, type SentinelOptions } from './sentinel-state.js';

const THRESHOLDS = { minDecisions: 40, minFollowups: 30, minServerRequests: 10 };

function audit(mini: MiniOptions, options: SentinelOptions = {}) {
  return auditMiniCluster(mini, { mode: 'relay', thresholds: THRESHOLDS, ...options });
}

/** a router that states none of its settings (60 trajectories unless told): its tokens_per_block must be inferred */
function unstatedRouter(mini: MiniOptions) {
  return audit({ routerSettings: false, trajectories: 60, ...mini });
}

describe('RouterBlockSizeInference', () => {
  /** n decisions over 3 servers; `follow(i)` says whether the router chose the server with the largest match */
  function feed(inference: RouterBlockSizeInference, tpb: number, n: number, follow: (i: number) => boolean): void {
    for (let i = 0; i < n; i++) {
      const best = i % 3;
      const predicted = [0, 0, 0];
      predicted[best] = tpb * 4;
      inference.observe(tpb, predicted, follow(i) ? best : (best + 1) % 3);
    }
  }

  it('locks the candidate the router follows far above chance, once enough decisions agree', () => {
    const inference = new RouterBlockSizeInference({ minDecisions: 40 });
    feed(inference, 128, 39, (i) => i % 10 !== 0);
    expect(inference.settle()).toBeNull();
    feed(inference, 128, 10, () => true);
    expect(inference.settle()).toBe(128);
    // locked: later contrary evidence does not flip it
    feed(inference, 32, 200, () => true);
    expect(inference.settle()).toBe(128);
    expect(inference.inferred).toBe(128);
  });

  it('never locks a candidate the router follows only by chance', () => {
    const inference = new RouterBlockSizeInference();
    // chosen = the best server one time in three: exactly what blind routing over 3 servers gives
    feed(inference, 128, 600, (i) => Math.floor(i / 3) % 3 === 0);
    expect(inference.settle()).toBeNull();
    const [stats] = inference.stats();
    expect(stats).toMatchObject({ tokensPerBlock: 128, decisions: 600 });
    expect(stats!.chance).toBeCloseTo(200, 6);
  });

  it('does not lock when two candidates are followed equally well', () => {
    const inference = new RouterBlockSizeInference();
    feed(inference, 32, 100, () => true);
    feed(inference, 128, 100, () => true);
    expect(inference.settle()).toBeNull();
    expect(inference.leader([32, 128], 32)).toBe(32);
  });

  it('ignores decisions where the candidate predicts no match anywhere, or where all servers tie', () => {
    const inference = new RouterBlockSizeInference({ minDecisions: 5 });
    for (let i = 0; i < 50; i++) inference.observe(32, [0, 0, 0], 0);
    for (let i = 0; i < 50; i++) inference.observe(32, [64, 64, 64], 1);
    expect(inference.settle()).toBeNull();
    expect(inference.stats()[0]).toMatchObject({ decisions: 50, agreements: 50, chance: 50 });
  });

  it('leads with the candidate under which the replica predicts matches before any is locked', () => {
    const inference = new RouterBlockSizeInference();
    expect(inference.leader([32, 128], 32)).toBe(32);
    feed(inference, 128, 10, () => false);
    expect(inference.leader([32, 128], 32)).toBe(128);
  });
});

describe('router tokens_per_block inferred from routing (no source states it)', () => {
  it.each([32, 64, 128])('a healthy router chunking %i-token blocks like its workers: inferred, no finding', (size) => {
    const { snapshot, input } = unstatedRouter({
      routing: 'prefix',
      blockSize: size,
      routerTokensPerBlock: size,
      trajectories: 30,
    });
    expect(snapshot.routerTokensPerBlock).toEqual({ value: size, from: 'inferred', candidates: [] });
    expect(input.router).toMatchObject({
      blockSize: { tokens: size, basis: 'inferred', from: 'inferred' },
      tokensPerBlockCandidates: [],
    });
    expect(snapshot.findings.map((f) => f.id)).toEqual([]);
    expect(snapshot.verdict).toBe('healthy');
    // after the lock the predictions are the router's: nearly every decision predicts a match
    expect(input.decisions.predictedAnyMatch / input.decisions.withKeys).toBeGreaterThan(0.9);
  });

  it('a healthy cluster is never called inert while the chunk size is still unknown', () => {
    const state = createSentinelState({ mode: 'relay', thresholds: THRESHOLDS });
    const observations = miniCluster({
      routing: 'prefix',
      routerSettings: false,
      blockSize: 128,
      routerTokensPerBlock: 128,
      trajectories: 30,
    });
    const seen: (number | null)[] = [];
    observations.forEach((obs, i) => {
      state.apply(obs);
      if (i % 10 !== 0) return;
      const snapshot = state.evaluate(obs.ts);
      seen.push(snapshot.routerTokensPerBlock.value);
      // before enough decisions the audit says so (evidence-insufficient), never anything else
      expect(snapshot.findings.filter((f) => f.id !== 'evidence-insufficient').map((f) => f.summary)).toEqual([]);
    });
    // it was unknown for a while, then inferred
    expect(seen[0]).toBeNull();
    expect(seen.at(-1)).toBe(128);
    // and with the whole run, routing visibly follows prefixes: no finding at all
    expect(state.evaluate(observations.at(-1)!.ts).findings.map((f) => f.summary)).toEqual([]);
  });

  it('a router chunking 32 tokens over 128-token worker blocks: inert, but no tokens-per-block-mismatch on a guess', () => {
    const { snapshot, input } = unstatedRouter({ routing: 'prefix', blockSize: 128, routerTokensPerBlock: 32 });
    expect(snapshot.routerTokensPerBlock).toEqual({ value: null, from: null, candidates: [32, 128] });
    const ids = snapshot.findings.map((f) => f.id);
    expect(ids).toContain('cache-signal-inert');
    expect(ids).not.toContain('tokens-per-block-mismatch');
    expect(snapshot.verdict).toBe('inert');
    // predicted under 128 the table matches: "predicted ≡ 0" does not hold under every candidate
    expect(input.decisions.predictedAnyMatch).toBeGreaterThan(0);
    const inert = snapshot.findings.find((f) => f.id === 'cache-signal-inert')!;
    expect(inert.summary).not.toMatch(/predicts a match for 0\.0%/);
    expect(inert.evidence.router_tokens_per_block).toBe('unknown (predicted under each of 32/128)');
  });

  it('events off (the seed): inert and events-absent, "predicted ≡ 0" under every candidate named as such', () => {
    const { snapshot } = unstatedRouter({ routing: 'random', blockSize: 128, routerTokensPerBlock: 32, events: false });
    const ids = snapshot.findings.map((f) => f.id);
    expect(ids).toContain('cache-signal-inert');
    expect(ids).toContain('events-absent');
    expect(ids).not.toContain('tokens-per-block-mismatch');
    expect(snapshot.routerTokensPerBlock.value).toBeNull();
  });

  it('a router that never polls: its table stays empty, predicted ≡ 0 under every candidate fires', () => {
    const { snapshot } = unstatedRouter({
      routing: 'random',
      blockSize: 64,
      routerTokensPerBlock: 64,
      routerPolls: false,
    });
    const inert = snapshot.findings.find((f) => f.id === 'cache-signal-inert');
    expect(inert?.summary).toMatch(
      /predicts a match for 0\.0% of decisions under every tokens_per_block it may use \(32, 64\)/,
    );
    expect(snapshot.findings.map((f) => f.id)).toContain('router-not-polling');
  });

  it('a stated tokens_per_block wins over the routing, and names its source', () => {
    const { snapshot, input } = audit({ routing: 'prefix', blockSize: 64, routerTokensPerBlock: 32, trajectories: 60 });
    expect(snapshot.routerTokensPerBlock).toEqual({ value: 32, from: 'simulator', candidates: [] });
    const mismatch = snapshot.findings.find((f) => f.id === 'tokens-per-block-mismatch');
    expect(mismatch?.evidence.router_tokens_per_block_from).toBe('simulator');
    expect(input.decisions.predictedAnyMatch).toBe(0);
  });
});

describe('backfill_block_hashes_on_finish with the chunk size unknown', () => {
  it("replays the router's own keys under every candidate: the next turn predicts a match on its server", () => {
    const joins: DecisionJoin[] = [];
    const state = createSentinelState({ mode: 'relay' });
    state.subscribe((e) => e.kind === 'decision' && joins.push(e.join));
    const servers = ['ctx0', 'ctx1'];
    // an orchestrator log that states backfill but not tokens_per_block
    state.apply({
      kind: 'router-config',
      ts: 0,
      source: 'orchestrator-log',
      routerType: 'kv_cache_aware',
      tokensPerBlock: null,
      maxBatchSize: 64,
      backfillBlockHashesOnFinish: true,
      servers,
    });
    for (const server of servers)
      state.apply({ kind: 'server-info', ts: 0, server, hashAlgo: 'v1_block_key', tokensPerBlock: 64 });
    const prompt = Uint32Array.from({ length: 300 }, (_, i) => 7 + i);
    const turn = (ts: number, requestId: string, tokens: Uint32Array): void => {
      state.apply({
        kind: 'decision',
        ts,
        requestId,
        correlationId: 'c',
        server: 'ctx1',
        promptTokens: tokens,
        promptTokenCount: tokens.length,
        inflight: { ctx0: 0, ctx1: 0 },
      });
      state.apply({
        kind: 'outcome',
        ts: ts + 1,
        requestId,
        server: 'ctx1',
        ok: true,
        promptTokens: tokens.length,
        cachedTokens: 0,
        latencyMs: 1,
      });
    };
    turn(10, 'r0', prompt);
    turn(20, 'r1', Uint32Array.from([...prompt, 1, 2, 3]));
    const second = joins[1]!.candidates.find((c) => c.server === 'ctx1')!;
    // 299 hashed tokens: 4 full 64-token blocks and a partial tail, backfilled and found again (predicted with 32
    // until a size is inferred: 9 full 32-token blocks and a partial one)
    expect(second.predictedTokens).toBeGreaterThanOrEqual(256);
    expect(joins[1]!.candidates.find((c) => c.server === 'ctx0')!.predictedTokens).toBe(0);
    expect(state.diagnosisInput(30).decisions.predictedAnyMatch).toBe(1);
    // a debug endpoint now states 64: the 64-token keys backfilled while the size was unknown are in the table
    state.apply({
      kind: 'router-config',
      ts: 40,
      source: 'debug-endpoint',
      routerType: 'kv_cache_aware',
      tokensPerBlock: 64,
      maxBatchSize: 64,
      backfillBlockHashesOnFinish: true,
      servers,
    });
    turn(50, 'r2', Uint32Array.from([...prompt, 1, 2, 3, 4, 5]));
    expect(joins[2]!.candidates.find((c) => c.server === 'ctx1')!.predictedTokens).toBe(256);
  });
});
