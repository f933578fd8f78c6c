// A state fed a whole mini cluster (mini-cluster.ts) and evaluated at its last observation: what the state tests
// audit, so each test file states only its options and thresholds.
import { createSentinelState, type SentinelOptions } from '../../src/core/state/sentinel-state.js';
import { miniCluster, type MiniOptions } from './mini-cluster.js';

/** `evaluateAfterMs`: how long after the last observation the state is evaluated */
export function auditMiniCluster(mini: MiniOptions, options: SentinelOptions = {}, evaluateAfterMs = 0) {
  const state = createSentinelState(options);
  const observations = miniCluster(mini);
  for (const obs of observations) state.apply(obs);
  const now = observations.at(-1)!.ts + evaluateAfterMs;
  return { state, snapshot: state.evaluate(now), input: state.diagnosisInput(now) };
}
