import { describe, expect, it } from 'vitest';
import type { KvEvent } from '../../core/wire/kv-event.js';
import { DigestLog, digestEvent } from './event-digest.js';

function removed(id: number, hashes: bigint[]): KvEvent {
  return {
    eventId: id,
    data: { type: 'removed', blockHashes: hashes },
    windowSize: 4096,
    attentionDpRank: 1,
    hashAlgo: null,
    layerGroupId: null,
  };
}

describe('DigestLog', () => {
  it('digests hashes as exact decimal strings', () => {
    expect(digestEvent(removed(3, [18446744073709551615n]))).toEqual({
      attention_dp_rank: 1,
      event_id: 3,
      type: 'removed',
      block_hashes: ['18446744073709551615'],
      parent_hash: null,
    });
  });

  it('drops the oldest beyond the event or hash budget and counts them', () => {
    const log = new DigestLog(3, 5);
    log.add([removed(0, [1n, 2n]), removed(1, [3n, 4n])]);
    expect(log.entries.map((e) => e.event_id)).toEqual([0, 1]);
    log.add([removed(2, [5n, 6n])]); // 6 hashes > 5
    expect(log.entries.map((e) => e.event_id)).toEqual([1, 2]);
    log.add([removed(3, []), removed(4, [])]); // 4 events > 3
    expect(log.entries.map((e) => e.event_id)).toEqual([2, 3, 4]);
    expect([log.total, log.dropped]).toEqual([5, 2]);
  });
});
