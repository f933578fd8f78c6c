import { describe, expect, it } from 'vitest';
import type { KvEvent } from '../wire/kv-event.js';
import { decodeEvent, encodeEvent } from './bundle-events.js';
import type { Json } from './bundle-fields.js';

const base = {
  eventId: null,
  windowSize: null,
  attentionDpRank: 2,
  hashAlgo: 'v2_sha256_64',
  layerGroupId: null,
} as const;

describe('bundle KV events', () => {
  it('keep the copy semantics of vLLM / SGLang stream events: residency, the removed and cleared cache level', () => {
    const events: KvEvent[] = [
      { ...base, residency: { hitLevel: 1 }, data: { type: 'removed', blockHashes: [5n], cacheLevel: 1 } },
      { ...base, residency: { hitLevel: 0 }, data: { type: 'all_cleared', cacheLevel: 0 } },
      { ...base, data: { type: 'removed', blockHashes: [6n] } },
      { ...base, data: { type: 'all_cleared' } },
    ];
    for (const event of events) {
      const json = JSON.parse(JSON.stringify(encodeEvent(event, false))) as Json;
      expect(decodeEvent(json, '$').event).toEqual(event);
    }
  });
});
