import { describe, expect, it } from 'vitest';
import type { DecisionObservation, OutcomeObservation } from '../observe/observation.js';
import {
  decisionOf,
  harnessModel,
  outcomeOf,
  prompt,
  see,
  storedEvent,
  totalOf,
} from '../../../test/helpers/state-harness.js';
import { counterKey } from './counter-schema.js';
import { DecisionsReducer } from './decisions-reducer.js';
import { OutcomesReducer } from './outcomes-reducer.js';

function reducers(truthSeen = true) {
  const model = harnessModel();
  const decisions = new DecisionsReducer(model);
  const outcomes = new OutcomesReducer(model, decisions, { truthSeen });
  return {
    model,
    decisions,
    outcomes,
    decide: (obs: DecisionObservation) => void decisions.decision(obs, see(model, obs), false),
    finish: (obs: OutcomeObservation) => outcomes.outcome(obs, see(model, obs), true),
  };
}

describe('OutcomesReducer', () => {
  it('a served request that computed a new block counts against its pull path once that brought events', () => {
    const { model, finish } = reducers();
    finish(outcomeOf('a', 'ctx0', { promptTokens: 16, cachedTokens: 0 }));
    expect(model.pullEvents.of('ctx0').newBlockOutcomesSincePullEvent).toBe(0);
    model.pullEvents.pullEvents('ctx0', 1_000);
    finish(outcomeOf('b', 'ctx0', { promptTokens: 16, cachedTokens: 0 }));
    // everything reused but a partial block: nothing new stored
    finish(outcomeOf('c', 'ctx0', { promptTokens: 16, cachedTokens: 13 }));
    finish(outcomeOf('d', 'ctx0', { promptTokens: 16, cachedTokens: 12 }));
    expect(model.pullEvents.of('ctx0').newBlockOutcomesSincePullEvent).toBe(2);
  });

  it('an outcome without its decision is counted by its server and as such, and joins nothing', () => {
    const { model, outcomes, finish } = reducers();
    expect(finish(outcomeOf('nobody', 'ctx0', { promptTokens: 16, cachedTokens: 4 }))).toBeNull();
    expect(outcomes.withoutDecision).toBe(1);
    expect(totalOf(model, counterKey('outcomes', 'ctx0'))).toBe(1);
    expect(totalOf(model, counterKey('promptTokens', 'ctx0'))).toBe(16);
    expect(totalOf(model, counterKey('withOutcome'))).toBe(0);
  });

  it('closes its decision: the tokens it served, never more cached than prompted; a failure serves none', () => {
    const { model, decisions, outcomes, decide, finish } = reducers();
    decide(decisionOf('r1', 'ctx0'));
    const join = finish(outcomeOf('r1', 'ctx0', { promptTokens: 16, cachedTokens: 20 }));
    expect(join).toMatchObject({ requestId: 'r1', server: 'ctx0', ok: true, scattered: false });
    expect(decisions.pending.peek('r1')).toBeUndefined();
    expect(totalOf(model, counterKey('withOutcome'))).toBe(1);
    expect(totalOf(model, counterKey('cachedTokens', 'ctx0'))).toBe(16);
    decide(decisionOf('r2', 'ctx1'));
    finish(outcomeOf('r2', 'ctx1', { ok: false, promptTokens: null, cachedTokens: null }));
    expect(totalOf(model, counterKey('failures', 'ctx1'))).toBe(1);
    expect(totalOf(model, counterKey('promptTokens', 'ctx1'))).toBe(0);
    // a failed request has no sticky ideal
    expect(totalOf(model, counterKey('stickyIdealPromptTokens'))).toBe(16);
    // the same outcome twice: the second has no decision left
    finish(outcomeOf('r1', 'ctx0'));
    expect(outcomes.withoutDecision).toBe(1);
  });

  it("the oracle is worker truth's best server once truth has been seen, else the sticky ideal", () => {
    const held = prompt(4);
    const oracleOf = (truthSeen: boolean): number => {
      const { model, decide, finish } = reducers(truthSeen);
      model.truth.apply('ctx0', storedEvent(held));
      decide(decisionOf('r1', 'ctx1', { promptTokens: held }));
      finish(outcomeOf('r1', 'ctx1', { promptTokens: held.length, cachedTokens: 0 }));
      expect(totalOf(model, counterKey('joinedOracleCachedTokens'))).toBeGreaterThan(0);
      return totalOf(model, counterKey('oracleCachedTokens', 'ctx1'));
    };
    // ctx0 held the prompt's blocks but the last (its last token is always computed); a first turn's ideal is what
    // it reused: nothing
    expect(oracleOf(true)).toBe(12);
    expect(oracleOf(false)).toBe(0);
  });

  it('a follow-up that moved and lost most of its prefix is scattered; the sticky ideal gives its previous turn back', () => {
    const { model, finish, decide } = reducers(false);
    decide(decisionOf('r1', 'ctx0', { correlationId: 't', promptTokenCount: 8 }));
    finish(outcomeOf('r1', 'ctx0', { promptTokens: 8, cachedTokens: 0 }));
    decide(decisionOf('r2', 'ctx1', { correlationId: 't', promptTokenCount: 16 }));
    const join = finish(outcomeOf('r2', 'ctx1', { promptTokens: 16, cachedTokens: 2 }));
    expect(join?.scattered).toBe(true);
    expect(totalOf(model, counterKey('followupsWithOutcome'))).toBe(1);
    expect(totalOf(model, counterKey('scattered'))).toBe(1);
    expect(totalOf(model, counterKey('stickyIdealMovedTurns'))).toBe(1);
    // no capacity known for ctx0: the previous turn's 8 tokens back, unbounded
    expect(totalOf(model, counterKey('stickyIdealUnboundedTurns'))).toBe(1);
    expect(totalOf(model, counterKey('stickyIdealCachedTokens'))).toBe(8);
    // avoidable: by the ideal, half the prompt was to be had (8 of 16), 6 tokens more than reused
    expect(totalOf(model, counterKey('avoidableScattered'))).toBe(1);
    expect(totalOf(model, counterKey('avoidableScatterLostTokens'))).toBe(6);
  });

  it('no sticky ideal for a turn whose previous server has since stored as much as it can hold', () => {
    const { model, finish, decide } = reducers(false);
    // ctx0 holds one 4-token block
    model.capacity.configure('ctx0', 1);
    decide(decisionOf('r1', 'ctx0', { correlationId: 't', promptTokenCount: 8 }));
    finish(outcomeOf('r1', 'ctx0', { promptTokens: 8, cachedTokens: 0 }));
    // another conversation fills ctx0 meanwhile
    decide(decisionOf('o1', 'ctx0', { correlationId: 'other', promptTokenCount: 8 }));
    finish(outcomeOf('o1', 'ctx0', { promptTokens: 8, cachedTokens: 0 }));
    decide(decisionOf('r2', 'ctx1', { correlationId: 't', promptTokenCount: 16 }));
    finish(outcomeOf('r2', 'ctx1', { promptTokens: 16, cachedTokens: 2 }));
    expect(totalOf(model, counterKey('stickyIdealEvictedTurns'))).toBe(1);
    // the moved turn's ideal is what it reused
    expect(totalOf(model, counterKey('stickyIdealCachedTokens'))).toBe(2);
    expect(totalOf(model, counterKey('avoidableScattered'))).toBe(0);
  });
});
