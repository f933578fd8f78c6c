import { describe, expect, it } from 'vitest';
import {
  BLOCK,
  decisionOf,
  harnessModel,
  prompt,
  see,
  storedEvent,
  totalOf,
} from '../../../test/helpers/state-harness.js';
import { counterKey } from './counter-schema.js';
import { joinDecision } from './decision-join.js';
import type { StateModel } from './state-model.js';

function decide(m: StateModel, server: string, tokens: Uint32Array, withCandidates = true) {
  const obs = decisionOf('r1', server, { promptTokens: tokens });
  const keys = see(m, obs)!;
  return joinDecision(m, obs, keys, true, withCandidates);
}

describe('joinDecision', () => {
  it('names the oracle-best server from worker truth and predicts the router from its replica', () => {
    const m = harnessModel();
    const full = prompt(6, 2);
    // ctx0 really holds the whole prompt; ctx1 holds the shared two blocks, but the router's table says it holds all
    m.truth.apply('ctx0', storedEvent(full));
    m.truth.apply('ctx1', storedEvent(prompt(2, 2)));
    m.replica.apply('ctx1', storedEvent(full));
    const join = decide(m, 'ctx1', full);
    expect(join.oracleBestServers).toEqual(['ctx0']);
    // the oracle never counts the last block (a prompt's last token is always computed)
    expect(join.oracleBest).toBeGreaterThan(join.oracleChosen);
    expect(join.oracleChosen).toBe(2 * BLOCK);
    expect(join.predictedAny).toBe(true);
    expect(join.predictedChosen).toBeGreaterThan(join.oracleChosen);
    expect(join.routerTokensPerBlock).toEqual([BLOCK]);
    expect(join.routerTokensPerBlockKnown).toBe(true);
    expect(join.candidates.map((c) => c.server)).toEqual(['ctx0', 'ctx1', 'ctx2']);
    expect(totalOf(m, counterKey('withKeys'))).toBe(1);
    expect(totalOf(m, counterKey('notOracleBest'))).toBe(1);
    expect(totalOf(m, counterKey('oracleBest'))).toBe(0);
    expect(totalOf(m, counterKey('oracleBestHeldBy', 'ctx0'))).toBe(1);
    expect(totalOf(m, counterKey('predictedAnyMatch'))).toBe(1);
  });

  it('choosing the holder counts oracle-best; a prefix nobody holds counts no-prefix and predicts nothing', () => {
    const m = harnessModel();
    const held = prompt(4, 0, 500);
    m.truth.apply('ctx2', storedEvent(held));
    expect(decide(m, 'ctx2', held).oracleBestServers).toEqual(['ctx2']);
    expect(totalOf(m, counterKey('oracleBest'))).toBe(1);
    const nobody = decide(m, 'ctx0', prompt(4, 0, 9_000));
    expect(nobody.oracleBestServers).toEqual([]);
    expect(nobody.oracleBest).toBe(0);
    expect(nobody.predictedAny).toBe(false);
    expect(totalOf(m, counterKey('noPrefix'))).toBe(1);
    expect(totalOf(m, counterKey('withKeys'))).toBe(2);
  });

  it("while the router's chunk size is unknown, predicts under every candidate and says it is not known", () => {
    const m = harnessModel({ routerTokensPerBlock: null });
    const join = decide(m, 'ctx0', prompt(16));
    expect(join.routerTokensPerBlockKnown).toBe(false);
    // TensorRT-LLM's default chunk (32) and the workers' block size
    expect([...join.routerTokensPerBlock].sort((a, b) => a - b)).toEqual([BLOCK, 32]);
  });

  it('lists candidates only when someone listens (the live feed)', () => {
    const m = harnessModel();
    expect(decide(m, 'ctx0', prompt(3), false).candidates).toEqual([]);
  });
});
