// A server's hash checks of stored events by result, read from the counters the worker-events reducer keeps: over
// the window for the diagnosis, since start for the snapshot — one reading of the three counters for both.
import { counterKey, type CounterKey } from './counter-schema.js';

export interface HashCheckCounts {
  readonly match: number;
  readonly mismatch: number;
  readonly unverifiable: number;
}

export function hashCheckCounts(server: string, read: (key: CounterKey) => number): HashCheckCounts {
  return {
    match: read(counterKey('hashMatch', server)),
    mismatch: read(counterKey('hashMismatch', server)),
    unverifiable: read(counterKey('hashUnverifiable', server)),
  };
}
