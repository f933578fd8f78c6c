import { describe, expect, it } from 'vitest';
import { parseKvEvents } from './parse-kv-events.js';
import { serializeKvEvents } from './serialize-kv-events.js';
import type { KvEvent } from './kv-event.js';
import { DOC_EXAMPLE, block, ok, spread, tok } from '../../../test/helpers/kv-events-text.js';

const U64_MAX = 18446744073709551615n;

describe('parseKvEvents: wrapped form', () => {
  it('parses the documented example exactly, u64 hashes included', () => {
    const events = ok(DOC_EXAMPLE);
    expect(events).toEqual([
      {
        eventId: 0,
        data: { type: 'created', numBlocksPerCacheLevel: [8192, 0] },
        windowSize: 4096,
        attentionDpRank: 0,
        hashAlgo: null,
        layerGroupId: null,
      },
      {
        eventId: 1,
        data: {
          type: 'stored',
          parentHash: null,
          blocks: [block(924206229973855n, [1, 2, 3, 4]), block(6875034662206558884n, [5, 6])],
        },
        windowSize: 4096,
        attentionDpRank: 0,
        hashAlgo: null,
        layerGroupId: null,
      },
      {
        eventId: 2,
        data: { type: 'removed', blockHashes: [6875034662206558884n] },
        windowSize: 4096,
        attentionDpRank: 0,
        hashAlgo: null,
        layerGroupId: null,
      },
      {
        eventId: 3,
        data: {
          type: 'updated',
          blockHash: 924206229973855n,
          cacheLevel: { newValue: 1, oldValue: 0 },
          priority: { newValue: 35, oldValue: 35 },
        },
        windowSize: 4096,
        attentionDpRank: 0,
        hashAlgo: null,
        layerGroupId: null,
      },
    ]);
  });

  it('serializes the documented example back to the identical bytes', () => {
    expect(serializeKvEvents(ok(DOC_EXAMPLE))).toBe(DOC_EXAMPLE);
  });

  it('keeps every item raw slice byte-identical, so a relay can re-serve the array', () => {
    const parsed = parseKvEvents(DOC_EXAMPLE);
    expect(`[${parsed.events.map((e) => e.raw).join(',')}]`).toBe(DOC_EXAMPLE);
    expect(parsed.events.map((e) => e.index)).toEqual([0, 1, 2, 3]);
    for (const e of parsed.events) expect(DOC_EXAMPLE.slice(e.offset, e.offset + e.raw.length)).toBe(e.raw);
  });

  it('round-trips block_hash 2^64-1 exactly: parse → serialize → parse, raw untouched', () => {
    const text =
      '[{"event_id":7,"data":{"type":"stored","parent_hash":18446744073709551614,"blocks":[' +
      `{"type":"stored_block","block_hash":18446744073709551615,"tokens":[${tok(9)}],"cache_level":0,"priority":35,"mm_keys":[],"cache_salt":null}]},` +
      '"window_size":4096}]';
    const first = parseKvEvents(text);
    expect(first.issues).toEqual([]);
    const data = first.events[0]?.event.data;
    expect(data?.type === 'stored' && data.blocks[0]?.blockHash).toBe(U64_MAX);
    expect(data?.type === 'stored' && data.parentHash).toBe(U64_MAX - 1n);
    expect(first.events[0]?.raw).toBe(text.slice(1, -1));
    const again = serializeKvEvents(first.events.map((e) => e.event));
    expect(again).toBe(text);
    expect(parseKvEvents(again).events.map((e) => e.event)).toEqual(first.events.map((e) => e.event));
  });

  it('reads V2-manager fields: hash_algo, layer_group_id, hex hashes, salts, mm keys, extra ids, lora_id', () => {
    const hex = 'e432228522a304ab556d66e6e40979ad05575f28b19b554264dd3c6277aaf073';
    const text =
      `[{"event_id":4,"data":{"type":"stored","parent_hash":"${hex.toUpperCase()}","blocks":[` +
      `{"type":"stored_block","block_hash":"${hex}","tokens":[${tok(1, 7)},${tok(2)}],"cache_level":1,"priority":null,` +
      `"mm_keys":[{"type":"mm_key","hash":"abc","start_offset":3}],"cache_salt":"tenant-\\"A\\"\\u00e9","lora_id":123}]},` +
      '"window_size":128,"attention_dp_rank":2,"hash_algo":"v2_sha256","layer_group_id":1}]';
    expect(ok(text)).toEqual([
      {
        eventId: 4,
        data: {
          type: 'stored',
          parentHash: hex,
          blocks: [
            block(hex, [1, 2], {
              tokenExtraIds: Uint32Array.from([7, 0]),
              cacheLevel: 1,
              priority: null,
              mmKeys: [{ hash: 'abc', startOffset: 3 }],
              cacheSalt: 'tenant-"A"é',
              loraId: 123n,
            }),
          ],
        },
        windowSize: 128,
        attentionDpRank: 2,
        hashAlgo: 'v2_sha256',
        layerGroupId: 1,
      },
    ]);
  });

  it('accepts older blocks without mm_keys / cache_salt and updated events with null diffs', () => {
    const text =
      `[{"event_id":1,"data":{"type":"stored","parent_hash":5,"blocks":[{"type":"stored_block","block_hash":6,"tokens":[${tok(1)}],"cache_level":0,"priority":35}]},"window_size":32},` +
      '{"event_id":2,"data":{"type":"updated","block_hash":6,"cache_level":{"type":"event_diff","new_value":1,"old_value":0},"priority":null},"window_size":32},' +
      '{"event_id":3,"data":{"type":"all_cleared"},"window_size":32}]';
    const events = ok(text);
    expect(events[0]?.data).toEqual({ type: 'stored', parentHash: 5n, blocks: [block(6n, [1])] });
    expect(events[1]?.data).toEqual({
      type: 'updated',
      blockHash: 6n,
      cacheLevel: { newValue: 1, oldValue: 0 },
      priority: null,
    });
    expect(events[2]?.data).toEqual({ type: 'all_cleared' });
  });

  it('reads hash_algo from data when the item does not state it; the item wins otherwise', () => {
    const [a, b] = ok(
      '[{"event_id":0,"data":{"type":"removed","block_hashes":[1],"hash_algo":"v2_sha256_64"},"window_size":1},' +
        '{"event_id":1,"hash_algo":"v1_block_key","data":{"type":"removed","block_hashes":[1],"hash_algo":"v2_sha256_64"},"window_size":1}]',
    );
    expect(a?.hashAlgo).toBe('v2_sha256_64');
    expect(b?.hashAlgo).toBe('v1_block_key');
  });

  it('parses whitespace, reordered keys and untagged nested objects the same as the compact form', () => {
    expect(ok(spread(DOC_EXAMPLE))).toEqual(ok(DOC_EXAMPLE));
    const reordered =
      '[{"data":{"blocks":[{"tokens":[{"token_id":1},{"token_extra_id":0,"token_id":2}],"block_hash":9,"priority":35,"cache_level":0}],"parent_hash":null,"type":"stored"},"event_id":1,"window_size":4096}]';
    expect(ok(reordered)[0]?.data).toEqual({ type: 'stored', parentHash: null, blocks: [block(9n, [1, 2])] });
  });
});

describe('parseKvEvents: flat form', () => {
  const cases: [string, string, KvEvent['data']][] = [
    [
      'created',
      '{"type":"created","num_blocks_per_cache_level":[10,2]}',
      { type: 'created', numBlocksPerCacheLevel: [10, 2] },
    ],
    [
      'stored',
      `{"type":"stored","parent_hash":null,"blocks":[{"type":"stored_block","block_hash":18446744073709551615,"tokens":[${tok(3)}],"cache_level":0,"priority":35}]}`,
      { type: 'stored', parentHash: null, blocks: [block(U64_MAX, [3])] },
    ],
    [
      'removed',
      '{"type":"removed","block_hashes":[1,18446744073709551615]}',
      { type: 'removed', blockHashes: [1n, U64_MAX] },
    ],
    [
      'updated',
      '{"type":"updated","block_hash":3,"cache_level":null,"priority":{"type":"event_diff","new_value":null,"old_value":35}}',
      { type: 'updated', blockHash: 3n, cacheLevel: null, priority: { newValue: null, oldValue: 35 } },
    ],
    ['all_cleared', '{"type":"all_cleared"}', { type: 'all_cleared' }],
  ];
  for (const [name, item, data] of cases) {
    it(`parses a flat ${name} item, and the wrapped one the same`, () => {
      expect(ok(`[${item}]`)).toEqual([
        { eventId: null, data, windowSize: null, attentionDpRank: null, hashAlgo: null, layerGroupId: null },
      ]);
      expect(ok(`[{"event_id":5,"data":${item},"window_size":64}]`)[0]?.data).toEqual(data);
    });
  }

  it('takes event-level fields from a flat item too', () => {
    const [e] = ok(
      '[{"type":"removed","block_hashes":[2],"event_id":9,"attention_dp_rank":1,"hash_algo":"v2_sha256_64"}]',
    );
    expect(e).toEqual({
      eventId: 9,
      data: { type: 'removed', blockHashes: [2n] },
      windowSize: null,
      attentionDpRank: 1,
      hashAlgo: 'v2_sha256_64',
      layerGroupId: null,
    });
  });
});
