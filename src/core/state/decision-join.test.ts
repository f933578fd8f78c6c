import { describe, expect, it } from 'vitest';
import * as harness from '../../../test/helpers/state-harness.js';
import { counterKey } from './counter-schema.js';
import { joinDecision } from './decision-join.js';
import type { StateModel } from './state-model.js';

function decide(m: StateModel, server: string, tokens: Uint32Array, withCandidates = true) {
  const obs = harness.decisionOf('r1', server, { promptTokens: tokens });
  const keys = harness.see(m, obs)!;
  return joinDecision(m, obs, keys, true, withCandidates);
}

describe('joinDecision', () => {
  it('names the oracle-best server from worker truth and predicts the router from its replica', () => {
    const m = harness.harnessModel();
    const full = harness.prompt(6, 2);
    // ctx0 really holds the whole prompt; ctx1 holds the shared two blocks, but the router's table says it holds all
    m.truth.apply('ctx0', harness.storedEvent(full));
    m.truth.apply('ctx1', harness.storedEvent(harness.prompt(2, 2)));
    m.replica.apply('ctx1', harness.storedEvent(full));
    const join = decide(m, 'ctx1', full);
    expect(join.oracleBestServers).toEqual(['ctx0']);
    // the oracle never counts the last block (a prompt's last token is always computed)
    expect(join.oracleBest).toBeGreaterThan(join.oracleChosen);
    expect(join.oracleChosen).toBe(2 * harness.BLOCK);
    expect(join.predictedAny).toBe(true);
    expect(join.predictedChosen).toBeGreaterThan(join.oracleChosen);
    expect(join.routerTokensPerBlock).toEqual([harness.BLOCK]);
    expect(join.routerTokensPerBlockKnown).toBe(true);
    expect(join.candidates.map((c) => c.server)).toEqual(['ctx0', 'ctx1', 'ctx2']);
    expect(harness.totalOf(m, counterKey('withKeys'))).toBe(1);
    expect(harness.totalOf(m, counterKey('notOracleBest'))).toBe(1);
    expect(harness.totalOf(m, counterKey('oracleBest'))).toBe(0);
    expect(harness.totalOf(m, counterKey('oracleBestHeldBy', 'ctx0'))).toBe(1);
    expect(harness.totalOf(m, counterKey('predictedAnyMatch'))).toBe(1);
  });

  it('choosing the holder counts oracle-best; a prefix nobody holds counts no-prefix and predicts nothing', () => {
    const m = harness.harnessModel();
    const held = harness.prompt(4, 0, 500);
    m.truth.apply('ctx2', harness.storedEvent(held));
    expect(decide(m, 'ctx2', held).oracleBestServers).toEqual(['ctx2']);
    expect(harness.totalOf(m, counterKey('oracleBest'))).toBe(1);
    const nobody = decide(m, 'ctx0', harness.prompt(4, 0, 9_000));
    expect(nobody.oracleBestServers).toEqual([]);
    expect(nobody.oracleBest).toBe(0);
    expect(nobody.predictedAny).toBe(false);
    expect(harness.totalOf(m, counterKey('noPrefix'))).toBe(1);
    expect(harness.totalOf(m, counterKey('withKeys'))).toBe(2);
  });

  it("while the router's chunk size is unknown, predicts under every candidate and says it is not known", () => {
    const m = harness.harnessModel({ routerTokensPerBlock: null });
    const join = decide(m, 'ctx0', harness.prompt(16));
    expect(join.routerTokensPerBlockKnown).toBe(false);
    // TensorRT-LLM's default chunk (32) and the workers' block size
    expect([...join.routerTokensPerBlock].sort((a, b) => a - b)).toEqual([harness.BLOCK, 32]);
  });

  it('lists candidates only when someone listens (the live feed)', () => {
    const m = harness.harnessModel();
    expect(decide(m, 'ctx0', harness.prompt(3), false).candidates).toEqual([]);
  });
});
