import { describe, expect, it } from 'vitest';
import { kvEvent } from '../../../test/helpers/kv-event-builders.js';
import { StreamHistory } from './stream-history.js';

const removed = (n: number) =>
  kvEvent({ type: 'removed', blockHashes: Array.from({ length: n }, (_, i) => BigInt(i + 1)) });

describe('StreamHistory', () => {
  it('keeps a gap per server and rank until the rank removed as many blocks as it holds', () => {
    const h = new StreamHistory();
    h.incomplete('ctx0', 1, 1000, 20);
    h.incomplete('ctx0', 1, 2000, 5); // a second late join adds, the first time stays
    h.observeEvent('ctx0', 1, removed(49));
    h.observeEvent('ctx0', 0, removed(100)); // another rank's removals do not count
    h.settle('ctx0', { blocks: 100, from: 'configuration' }, 2, 10);
    expect(h.of('ctx0')).toEqual([{ rank: 1, since: 1000, missingBatches: 25, removedSince: 49 }]);
    h.observeEvent('ctx0', 1, removed(1));
    h.settle('ctx0', { blocks: 100, from: 'configuration' }, 2, 10);
    expect(h.of('ctx0')).toEqual([]);
  });

  it('never settles on the observed peak (it counts known blocks only); a table full of known blocks does', () => {
    const h = new StreamHistory();
    h.incomplete('ctx0', 0, 1000, 3);
    h.observeEvent('ctx0', 0, removed(500));
    h.settle('ctx0', { blocks: 10, from: 'observed peak residency' }, 1, 10);
    h.settle('ctx0', null, 1, 10);
    expect(h.of('ctx0')).toHaveLength(1);
    h.settle('ctx0', { blocks: 600, from: 'created event' }, 1, 600);
    expect(h.of('ctx0')).toEqual([]);
  });

  it('a cleared cache or a restart leaves nothing unknown', () => {
    const h = new StreamHistory();
    h.incomplete('ctx0', 0, 1, 3);
    h.incomplete('ctx0', 1, 1, 3);
    h.observeEvent('ctx0', 0, kvEvent({ type: 'all_cleared' }));
    h.reset('ctx0', 1);
    expect(h.of('ctx0')).toEqual([]);
  });
});
