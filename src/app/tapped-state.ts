// The daemon's port onto a state with a tap that sees every observation first: the live audit and the demo count
// what the sources delivered without wrapping the state by hand each time.
import type { Observation } from '../core/observe/observation.js';
import type { SentinelState } from '../core/state/sentinel-state.js';
import type { StatePort } from './daemon/daemon.js';

export function tappedStatePort(state: SentinelState, tap: (observation: Observation) => void): StatePort {
  return {
    apply(observation) {
      tap(observation);
      state.apply(observation);
    },
    evaluate: (now) => state.evaluate(now),
    snapshot: (now) => state.snapshot(now),
    lastEvaluation: () => state.lastEvaluation(),
    diagnosisInput: (now) => state.diagnosisInput(now),
    subscribe: (listener) => state.subscribe(listener),
    onApplied: (listener) => state.onApplied(listener),
  };
}
