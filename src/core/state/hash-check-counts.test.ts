import { describe, expect, it } from 'vitest';
import { counterKey, type CounterKey } from './counter-schema.js';
import { hashCheckCounts } from './hash-check-counts.js';

describe('hashCheckCounts', () => {
  it("reads the server's match, mismatch and unverifiable counters through the reader it is given", () => {
    const values = new Map<CounterKey, number>([
      [counterKey('hashMatch', 'ctx0'), 7],
      [counterKey('hashMismatch', 'ctx0'), 2],
      [counterKey('hashUnverifiable', 'ctx0'), 1],
      [counterKey('hashMatch', 'ctx1'), 100],
    ]);
    const read = (key: CounterKey): number => values.get(key) ?? 0;
    expect(hashCheckCounts('ctx0', read)).toEqual({ match: 7, mismatch: 2, unverifiable: 1 });
    expect(hashCheckCounts('ctx1', read)).toEqual({ match: 100, mismatch: 0, unverifiable: 0 });
  });
});
