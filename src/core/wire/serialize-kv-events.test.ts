import { describe, expect, it } from 'vitest';
import { joinRawKvEvents, serializeKvEvent, serializeKvEvents } from './serialize-kv-events.js';
import { parseKvEvents } from './parse-kv-events.js';
import type { KvEvent } from './kv-event.js';

const base = { eventId: 3, windowSize: 4096, attentionDpRank: null, hashAlgo: null, layerGroupId: null } as const;

describe('serializeKvEvent', () => {
  it('writes the compact TRT-LLM form: key order, no spaces, optional fields only when set', () => {
    const event: KvEvent = { ...base, data: { type: 'removed', blockHashes: [18446744073709551615n, 1n] } };
    expect(serializeKvEvent(event)).toBe(
      '{"event_id":3,"data":{"type":"removed","block_hashes":[18446744073709551615,1]},"window_size":4096}',
    );
    expect(serializeKvEvent({ ...event, attentionDpRank: 0, hashAlgo: 'v2_sha256_64', layerGroupId: 2 })).toBe(
      '{"event_id":3,"data":{"type":"removed","block_hashes":[18446744073709551615,1]},"window_size":4096,"attention_dp_rank":0,"hash_algo":"v2_sha256_64","layer_group_id":2}',
    );
  });

  it('writes stored blocks with tokens, extra ids, mm keys, salts (escaped like Python) and lora_id', () => {
    const hex = 'ab'.repeat(32);
    const event: KvEvent = {
      ...base,
      data: {
        type: 'stored',
        parentHash: hex,
        blocks: [
          {
            blockHash: hex,
            tokens: Uint32Array.from([1, 4294967295]),
            tokenExtraIds: Uint32Array.from([0, 9]),
            cacheLevel: 1,
            priority: null,
            mmKeys: [{ hash: 'x"y', startOffset: 2 }],
            cacheSalt: 'é\n\u0001\u2028',
            loraId: 7n,
          },
        ],
      },
    };
    expect(serializeKvEvent(event)).toBe(
      `{"event_id":3,"data":{"type":"stored","parent_hash":"${hex}","blocks":[{"type":"stored_block","block_hash":"${hex}",` +
        '"tokens":[{"type":"unique_token","token_id":1,"token_extra_id":0},{"type":"unique_token","token_id":4294967295,"token_extra_id":9}],' +
        '"cache_level":1,"priority":null,"mm_keys":[{"type":"mm_key","hash":"x\\"y","start_offset":2}],"cache_salt":"é\\n\\u0001\u2028","lora_id":7}]},"window_size":4096}',
    );
  });

  it('writes created, updated (with null diffs) and all_cleared, and null ids as null', () => {
    const events: KvEvent[] = [
      { ...base, eventId: null, windowSize: null, data: { type: 'created', numBlocksPerCacheLevel: [8192, 0] } },
      { ...base, data: { type: 'updated', blockHash: 5n, cacheLevel: { newValue: 1, oldValue: 0 }, priority: null } },
      { ...base, data: { type: 'all_cleared' } },
    ];
    expect(serializeKvEvents(events)).toBe(
      '[{"event_id":null,"data":{"type":"created","num_blocks_per_cache_level":[8192,0]},"window_size":null},' +
        '{"event_id":3,"data":{"type":"updated","block_hash":5,"cache_level":{"type":"event_diff","new_value":1,"old_value":0},"priority":null},"window_size":4096},' +
        '{"event_id":3,"data":{"type":"all_cleared"},"window_size":4096}]',
    );
    expect(serializeKvEvents([])).toBe('[]');
  });
});

describe('joinRawKvEvents', () => {
  it('re-serves items byte for byte', () => {
    const text =
      '[{"type":"all_cleared"},{"event_id":1,"data":{"type":"removed","block_hashes":[18446744073709551615]}}]';
    expect(joinRawKvEvents(parseKvEvents(text).events)).toBe(text);
    expect(joinRawKvEvents([])).toBe('[]');
  });
});
