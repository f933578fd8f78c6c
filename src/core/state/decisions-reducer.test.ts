import { describe, expect, it } from 'vitest';
import type { RouterScoreObservation } from '../observe/observation.js';
import {
  decisionOf,
  harnessModel,
  prompt,
  see,
  storedEvent,
  totalOf,
  type HarnessOptions,
} from '../../../test/helpers/state-harness.js';
import { counterKey } from './counter-schema.js';
import { DecisionsReducer } from './decisions-reducer.js';
import type { DecisionObservation } from '../observe/observation.js';

function reducer(options: HarnessOptions = {}) {
  const model = harnessModel(options);
  const decisions = new DecisionsReducer(model);
  const decide = (obs: DecisionObservation, withJoin = false) => decisions.decision(obs, see(model, obs), withJoin);
  return { model, decisions, decide };
}

function score(requestId: string, matched: number, chosen = 'ctx0'): RouterScoreObservation {
  return {
    kind: 'router-score',
    ts: 1_010,
    seq: 0,
    requestId,
    correlationId: null,
    chosen,
    candidates: [
      { server: 'ctx0', matchedTokens: matched, activeRequests: 0, score: 0 },
      { server: 'ctx1', matchedTokens: 0, activeRequests: 0, score: 0 },
    ],
  };
}

describe('DecisionsReducer', () => {
  it('tracks turns per trajectory: a follow-up back on its server is sticky, one that moved is not', () => {
    const { model, decisions, decide } = reducer();
    decide(decisionOf('r1', 'ctx0', { correlationId: 't', promptTokenCount: 8 }));
    decide(decisionOf('r2', 'ctx0', { correlationId: 't', promptTokenCount: 10 }));
    decide(decisionOf('r2b', 'ctx0', { correlationId: 't', promptTokenCount: 12 }));
    decide(decisionOf('r3', 'ctx1', { correlationId: 't', promptTokenCount: 16 }));
    decide(decisionOf('r4', 'ctx2', { correlationId: 'other', promptTokenCount: 8 }));
    expect(totalOf(model, counterKey('followups'))).toBe(3);
    expect(totalOf(model, counterKey('sticky'))).toBe(2);
    expect(totalOf(model, counterKey('requests', 'ctx0'))).toBe(3);
    expect(decisions.pending.peek('r1')).toMatchObject({ followup: false, sticky: null, prevServer: null });
    expect(decisions.pending.peek('r2')).toMatchObject({ followup: true, sticky: true, prevServer: 'ctx0' });
    expect(decisions.pending.peek('r3')).toMatchObject({
      followup: true,
      sticky: false,
      prevServer: 'ctx0',
      prevPromptTokens: 12,
    });
    expect(decisions.trajectories.peek('t')).toMatchObject({ lastServer: 'ctx1', turns: 4, lastPromptTokens: 16 });
  });

  it('forgets a trajectory idle past the limit: its next turn is a first one, counted as idle, not evicted', () => {
    const { model, decisions, decide } = reducer({ limits: { trajectoryIdleMs: 1_000 } });
    decide(decisionOf('a1', 'ctx0', { ts: 0, correlationId: 'a' }));
    decide(decisionOf('b1', 'ctx0', { ts: 500, correlationId: 'b' }));
    decide(decisionOf('a2', 'ctx0', { ts: 1_000, correlationId: 'a' }));
    // b idle 1,001 ms: forgotten when c arrives, while a (idle 500 ms) stays
    decide(decisionOf('c1', 'ctx1', { ts: 1_501, correlationId: 'c' }));
    expect(decisions.trajectories.peek('b')).toBeUndefined();
    expect(decisions.trajectories.peek('a')).toMatchObject({ lastTs: 1_000, turns: 2 });
    decide(decisionOf('b2', 'ctx0', { ts: 1_600, correlationId: 'b' }));
    expect(decisions.pending.peek('b2')).toMatchObject({ followup: false, prevServer: null });
    expect(decisions.pending.peek('a2')).toMatchObject({ followup: true, sticky: true });
    expect(totalOf(model, counterKey('followups'))).toBe(1);
    expect(decisions.trajectories.dropped).toBe(0);
    expect(decisions.trajectoriesExpired).toBe(1);
    // out of order (sources' clocks differ): q arrives after p but is stamped earlier, so p's recency shields it
    decide(decisionOf('p1', 'ctx1', { ts: 5_000, correlationId: 'p' }));
    decide(decisionOf('q1', 'ctx1', { ts: 100, correlationId: 'q' }));
    decide(decisionOf('q2', 'ctx1', { ts: 1_200, correlationId: 'q' }));
    expect(decisions.pending.peek('q2')).toMatchObject({ followup: false });
    // p's arrival forgot a, b and c (idle past 1 s by its clock), q2 forgot q1
    expect(decisions.trajectoriesExpired).toBe(5);
  });

  it('returns the join only when someone listens, and pends every decision for its outcome', () => {
    const { decisions, decide } = reducer();
    expect(decide(decisionOf('r1', 'ctx0', { promptTokens: prompt(3) }))).toBeNull();
    const join = decide(decisionOf('r2', 'ctx1', { promptTokens: prompt(3), correlationId: 'c' }), true);
    expect(join).toMatchObject({ requestId: 'r2', server: 'ctx1', correlationId: 'c', followup: false });
    expect(join?.candidates.map((c) => c.server)).toEqual(['ctx0', 'ctx1', 'ctx2']);
    expect(decisions.pending.peek('r1')?.hasKeys).toBe(true);
    // without prompt ids the decision waits for its outcome's token count, with no keys to join
    decide(decisionOf('r3', 'ctx0'));
    expect(decisions.pending.peek('r3')).toMatchObject({ hasKeys: false, countFromOutcome: true });
  });

  it('counts the servers the router lists, or more when decisions chose others', () => {
    const { decisions, decide } = reducer({ servers: ['ctx0', 'ctx1'] });
    expect(decisions.serverCount()).toBe(2);
    decide(decisionOf('r1', 'ctx0'));
    decide(decisionOf('r2', 'ctx7'));
    expect(decisions.serverCount()).toBe(2);
    decide(decisionOf('r3', 'ctx8'));
    expect(decisions.serverCount()).toBe(3);
  });

  it("keeps the chunk sizes considered while the router's is unknown, and none once it is stated", () => {
    const unknown = reducer({ routerTokensPerBlock: null });
    expect(unknown.decisions.tokensPerBlockCandidates).toEqual([]);
    unknown.decide(decisionOf('r1', 'ctx0', { promptTokens: prompt(16) }));
    expect([...unknown.decisions.tokensPerBlockCandidates].sort((a, b) => a - b)).toEqual([4, 32]);
    const stated = reducer();
    stated.decide(decisionOf('r1', 'ctx0', { promptTokens: prompt(16) }));
    expect(stated.decisions.tokensPerBlockCandidates).toEqual([]);
  });

  it('records the load at decision time: in-flight per server, the peak, and a spread the load term alone decides', () => {
    // max_batch_size 8: a spread of 2 requests is a load term of 0.25, the sent-away threshold
    const { model, decisions, decide } = reducer({ maxBatchSize: 8 });
    decide(decisionOf('r1', 'ctx0', { inflight: { ctx0: 1, ctx1: 2, ctx2: 1 } }));
    expect(totalOf(model, counterKey('loadSpreadOverCacheDelta'))).toBe(0);
    decide(decisionOf('r2', 'ctx0', { inflight: { ctx0: 1, ctx1: 3, ctx2: 2 } }));
    expect(totalOf(model, counterKey('loadSpreadOverCacheDelta'))).toBe(1);
    expect(decisions.inflightOf('ctx1')).toBe(3);
    expect(totalOf(model, counterKey('inflightSum', 'ctx1'))).toBe(5);
    expect(totalOf(model, counterKey('inflightReports', 'ctx1'))).toBe(2);
    expect(totalOf(model, counterKey('maxInflightSum'))).toBe(5);
  });

  it('expires decisions that waited past the TTL for their outcome, oldest first, and counts them', () => {
    const { decisions, decide } = reducer({ limits: { pendingTtlMs: 1_000 } });
    decide(decisionOf('a', 'ctx0', { ts: 0 }));
    decide(decisionOf('b', 'ctx0', { ts: 4_500 }));
    decisions.expirePending(4_999);
    expect(decisions.pendingExpired).toBe(1);
    expect(decisions.pending.peek('a')).toBeUndefined();
    expect(decisions.pending.peek('b')).toBeDefined();
    decisions.expirePending(5_500);
    expect(decisions.pendingExpired).toBe(1);
  });

  it("joins the router's own scores with the replica's prediction, whichever arrives first", () => {
    const { model, decisions, decide } = reducer();
    const held = prompt(4);
    model.replica.apply('ctx0', storedEvent(held));
    // the replica predicts a match; the router reported none: its table lacks what it was sent
    decide(decisionOf('r1', 'ctx0', { promptTokens: held }));
    decisions.routerScore(score('r1', 0));
    // the score first, then the decision
    decisions.routerScore(score('r2', 8));
    decide(decisionOf('r2', 'ctx0', { promptTokens: held }));
    decisions.routerScore(score('r3', 0));
    decide(decisionOf('r3', 'ctx0', { promptTokens: held }));
    // nothing predicted: nothing to join
    decide(decisionOf('r4', 'ctx1', { promptTokens: prompt(4, 0, 7_000) }));
    decisions.routerScore(score('r4', 0, 'ctx1'));
    expect(totalOf(model, counterKey('routerScores'))).toBe(4);
    expect(totalOf(model, counterKey('routerScoresAnyMatch'))).toBe(1);
    expect(totalOf(model, counterKey('replicaPredictedMatch'))).toBe(3);
    expect(totalOf(model, counterKey('replicaMatchRouterNone'))).toBe(2);
  });

  it('counts a score the load sent away from the best cache term', () => {
    const { model, decisions } = reducer({ maxBatchSize: 8 });
    decisions.routerScore({
      ...score('r1', 8),
      chosen: 'ctx1',
      candidates: [
        { server: 'ctx0', matchedTokens: 8, activeRequests: 4, score: 0.5 },
        { server: 'ctx1', matchedTokens: 0, activeRequests: 0, score: 0 },
      ],
    });
    // ctx0's cache term 0.5 + 4/8 = 1 against ctx1's 0: sent away by load
    expect(totalOf(model, counterKey('routerScoresSentAwayByLoad'))).toBe(1);
  });
});
