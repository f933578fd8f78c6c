// fast-check arbitraries of domain KV events, shared by the wire tests (and usable by simulator tests).
// Generated events are canonical: what the parser yields for what the serializer writes (extra ids all 0 → null).
import fc from 'fast-check';
import type {
  EventDiff,
  KvEvent,
  KvEventData,
  MmKey,
  StoredBlock,
  WireBlockHash,
} from '../../src/core/wire/kv-event.js';
import { HASH_ALGOS } from '../../src/core/wire/kv-event.js';

const U64_MAX = 2n ** 64n - 1n;

export const u64Arb: fc.Arbitrary<bigint> = fc.oneof(
  fc.bigInt({ min: 0n, max: U64_MAX }),
  fc.constantFrom(U64_MAX, U64_MAX - 1n, 2n ** 63n, 2n ** 53n + 1n, 0n, 999_999_999_999_999n, 1_000_000_000_000_000n),
);

export const hexHashArb: fc.Arbitrary<string> = fc
  .uint8Array({ minLength: 32, maxLength: 32 })
  .map((bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join(''));

export const wireHashArb: fc.Arbitrary<WireBlockHash> = fc.oneof(u64Arb, hexHashArb);

/** Well-formed strings incl. control characters, quotes, backslashes and astral characters. */
export const textArb: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'binary-ascii', maxLength: 12 }),
  fc.string({ unit: 'grapheme', maxLength: 6 }),
);

const natArb = fc.oneof(fc.nat({ max: 100_000 }), fc.maxSafeNat());
const nullableNat = fc.option(natArb, { nil: null });

const mmKeyArb: fc.Arbitrary<MmKey> = fc.record({ hash: fc.oneof(hexHashArb, textArb), startOffset: natArb });

export const storedBlockArb: fc.Arbitrary<StoredBlock> = fc
  .record({
    blockHash: wireHashArb,
    ids: fc.array(fc.nat({ max: 0xffff_ffff }), { maxLength: 40 }),
    extraSeed: fc.option(fc.array(fc.nat({ max: 0xffff_ffff }), { minLength: 40, maxLength: 40 }), { nil: null }),
    cacheLevel: fc.nat({ max: 3 }),
    priority: fc.option(fc.nat({ max: 100 }), { nil: null }),
    mmKeys: fc.array(mmKeyArb, { maxLength: 2 }),
    cacheSalt: fc.option(textArb, { nil: null }),
    loraId: fc.option(u64Arb, { nil: null }),
  })
  .map(({ blockHash, ids, extraSeed, cacheLevel, priority, mmKeys, cacheSalt, loraId }) => {
    const tokens = Uint32Array.from(ids);
    let tokenExtraIds: Uint32Array | null = null;
    if (extraSeed !== null) {
      const extras = Uint32Array.from(extraSeed.slice(0, ids.length));
      if (extras.some((x) => x !== 0)) tokenExtraIds = extras;
    }
    return { blockHash, tokens, tokenExtraIds, cacheLevel, priority, mmKeys, cacheSalt, loraId };
  });

const diffArb: fc.Arbitrary<EventDiff | null> = fc.option(
  fc.record({
    newValue: fc.option(fc.nat({ max: 100 }), { nil: null }),
    oldValue: fc.option(fc.nat({ max: 100 }), { nil: null }),
  }),
  { nil: null },
);

export const eventDataArb: fc.Arbitrary<KvEventData> = fc.oneof(
  fc.record({ type: fc.constant('created' as const), numBlocksPerCacheLevel: fc.array(natArb, { maxLength: 3 }) }),
  fc.record({
    type: fc.constant('stored' as const),
    parentHash: fc.option(wireHashArb, { nil: null }),
    blocks: fc.array(storedBlockArb, { maxLength: 3 }),
  }),
  fc.record({ type: fc.constant('removed' as const), blockHashes: fc.array(wireHashArb, { maxLength: 5 }) }),
  fc.record({ type: fc.constant('updated' as const), blockHash: wireHashArb, cacheLevel: diffArb, priority: diffArb }),
  fc.constant({ type: 'all_cleared' as const }),
);

export const kvEventArb: fc.Arbitrary<KvEvent> = fc.record({
  eventId: nullableNat,
  data: eventDataArb,
  windowSize: nullableNat,
  attentionDpRank: fc.option(fc.nat({ max: 64 }), { nil: null }),
  hashAlgo: fc.option(fc.constantFrom(...HASH_ALGOS), { nil: null }),
  layerGroupId: fc.option(fc.nat({ max: 8 }), { nil: null }),
});
