import type { Observation, ObservationKind } from '../../src/core/observe/observation.js';
import type { ObservationSink } from '../../src/sources/ports.js';

export class RecordingSink implements ObservationSink {
  readonly observations: Observation[] = [];

  apply(observation: Observation): void {
    this.observations.push(observation);
  }

  of<K extends ObservationKind>(kind: K): Extract<Observation, { kind: K }>[] {
    return this.observations.filter((o): o is Extract<Observation, { kind: K }> => o.kind === kind);
  }
}

/** Polls `check` until it returns true (real I/O settles asynchronously); fails after `timeoutMs`. */
export async function eventually(check: () => boolean, timeoutMs = 5_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
