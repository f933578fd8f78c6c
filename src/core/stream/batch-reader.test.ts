// The bytes-first reader against the reference decode (the whole document through @msgpack/msgpack, then the
// batch): on random vLLM, SGLang and TensorRT-LLM batches in every shape they publish it must take the batch itself
// and give the reference's result value for value; on anything else (bad events, odd values, damaged bytes) it
// must step aside so the reference names the problem, and the decode never throws.
import { Encoder } from '@msgpack/msgpack';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readStreamBatch } from './batch-reader.js';
import { decodeStreamBatch, decodeStreamBatchReference, REMOVED_FIELDS, STORED_FIELDS } from './decode-batch.js';

const encode = (v: unknown): Uint8Array => new Encoder({ useBigInt64: true }).encode(v);

/** a hash in any form an engine sends: small or full-width unsigned, signed int64, or digest bytes */
const hash = fc.oneof(
  fc.integer({ min: 0, max: 2 ** 31 }),
  fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
  fc.bigInt({ min: -(2n ** 63n), max: -1n }),
  fc.integer({ min: -(2 ** 31), max: -1 }),
  fc.uint8Array({ minLength: 1, maxLength: 32 }),
);
const tokens = fc.array(fc.oneof(fc.integer({ min: 0, max: 127 }), fc.integer({ min: 0, max: 2 ** 32 - 1 })), {
  maxLength: 48,
});
const optStr = fc.option(fc.constantFrom('GPU', 'CPU', 'cpu_tier1', 'adapter-a', ''), { nil: null });
const optCount = fc.option(fc.integer({ min: 0, max: 70_000 }), { nil: null });
const extraKey = fc.oneof(
  fc.constant(null),
  fc.string({ maxLength: 6 }),
  fc.integer(),
  fc.tuple(fc.string(), fc.integer()),
);

interface Shape {
  readonly positional: boolean;
}

const stored = fc
  .record(
    {
      block_hashes: fc.array(hash, { maxLength: 6 }),
      parent_block_hash: fc.option(hash, { nil: null }),
      token_ids: fc.option(tokens, { nil: null }),
      block_size: fc.integer({ min: 0, max: 256 }),
      lora_id: optCount,
      medium: optStr,
      lora_name: optStr,
      extra_keys: fc.option(fc.array(extraKey, { maxLength: 6 }), { nil: null }),
      group_idx: optCount,
      kv_cache_spec_kind: fc.option(fc.constantFrom('full_attention', 'sliding_window'), { nil: null }),
      kv_cache_spec_sliding_window: optCount,
      cache_salt: optStr,
      session_id: fc.option(fc.string(), { nil: null }),
      mm_keys: fc.option(fc.array(fc.array(fc.string(), { maxLength: 2 }), { maxLength: 2 }), { nil: null }),
    },
    { requiredKeys: ['block_hashes', 'block_size'] },
  )
  .map((f) => ({ type: 'BlockStored', ...f }));
const removed = fc
  .record(
    { block_hashes: fc.array(hash, { maxLength: 6 }), medium: optStr, group_idx: optCount },
    { requiredKeys: ['block_hashes'] },
  )
  .map((f) => ({ type: 'BlockRemoved', ...f }));
const cleared = fc.constant({ type: 'AllBlocksCleared' });

/** The event as a tagged map, or positionally (older vLLM, SGLang): tag, then its fields in order, nil for absent. */
function shaped(e: Record<string, unknown>, s: Shape): unknown {
  if (!s.positional) return e;
  const names = e.type === 'BlockStored' ? STORED_FIELDS : e.type === 'BlockRemoved' ? REMOVED_FIELDS : [];
  const list = [e.type, ...names.map((n) => e[n] ?? null)];
  while (list.length > 1 && list[list.length - 1] === null) list.pop();
  return list;
}

const batch = fc
  .record({
    positional: fc.boolean(),
    envelope: fc.constantFrom('map', 'map-attn', 'array2', 'array3', 'array4'),
    ts: fc.oneof(fc.double({ noNaN: true }), fc.integer(), fc.constant(null)),
    rank: optCount,
    events: fc.array(fc.oneof(stored, removed, cleared), { maxLength: 5 }),
    id: fc.uint8Array({ minLength: 0, maxLength: 16 }),
  })
  .map((b) => {
    const events = b.events.map((e) => shaped(e as Record<string, unknown>, b));
    switch (b.envelope) {
      case 'map':
        return { ts: b.ts, events, data_parallel_rank: b.rank };
      case 'map-attn':
        return { events, ts: b.ts, attn_dp_rank: b.rank };
      case 'array2':
        return [b.ts, events];
      case 'array3':
        return [b.ts, events, b.rank];
      case 'array4':
        return [b.ts, events, b.rank, b.id];
    }
  });

describe('readStreamBatch (bytes first)', () => {
  it('reads every shape the engines publish itself, exactly as the reference decode does', () => {
    fc.assert(
      fc.property(batch, (doc) => {
        const bytes = encode(doc);
        const fast = readStreamBatch(bytes);
        expect(fast).not.toBeNull();
        expect(fast).toEqual(decodeStreamBatchReference(bytes));
      }),
      { numRuns: 1_500 },
    );
  });

  it('reads what Python msgpack writes for vLLM (a map batch, uint64 hashes, uint32 token ids)', () => {
    // bytes as msgpack.packb({"ts": 1.5, "events": [{"type": "BlockStored", "block_hashes": [2**64 - 1],
    // "parent_block_hash": None, "token_ids": [70000], "block_size": 1, "lora_id": None, "medium": "GPU",
    // "lora_name": None}], "data_parallel_rank": 0}) writes them
    const hex =
      '83a27473cb3ff8000000000000a66576656e74739188a474797065ab426c6f636b53746f726564ac626c6f636b5f686173686573' +
      '91cfffffffffffffffffb1706172656e745f626c6f636b5f68617368c0a9746f6b656e5f69647391ce00011170aa626c6f636b5f' +
      '73697a6501a76c6f72615f6964c0a66d656469756da3475055a96c6f72615f6e616d65c0b2646174615f706172616c6c656c5f72' +
      '616e6b00';
    const bytes = Buffer.from(hex, 'hex');
    const fast = readStreamBatch(bytes);
    expect(fast).toEqual(decodeStreamBatchReference(bytes));
    const [e] = fast!.batch!.events;
    expect(e?.type === 'stored' && [e.blockHashes, Array.from(e.tokens!), e.medium]).toEqual([
      [2n ** 64n - 1n],
      [70_000],
      'GPU',
    ]);
  });

  it('reads a float 32 ts as the reference does, a non-finite one as null', () => {
    for (const ts of [1.5, 1234.25, Infinity, NaN]) {
      const bytes = new Encoder({ forceFloat32: true }).encode([ts, [{ type: 'AllBlocksCleared' }]]);
      expect(bytes[1]).toBe(0xca);
      const fast = readStreamBatch(bytes);
      expect(fast).toEqual(decodeStreamBatchReference(bytes));
      expect(fast?.batch?.ts).toBe(Number.isFinite(ts) ? ts : null);
    }
  });

  it('steps aside for what it does not take, and the decode still equals the reference', () => {
    const odd = [
      // SGLang's EAGLE bigram pages, a float hash, a string token (multimodal), an unknown event, a missing field
      [1, [['BlockStored', [1], null, [[1, 2]], 1]]],
      [1, [{ type: 'BlockStored', block_hashes: [1.5], token_ids: [], block_size: 0 }]],
      [1, [{ type: 'BlockStored', block_hashes: [1], token_ids: ['img'], block_size: 1 }]],
      [1, [{ type: 'Other' }]],
      [1, [{ type: 'BlockRemoved' }]],
      { ts: 1, events: [], data_parallel_rank: -1 },
      { ts: 1, events: 'none' },
      [1],
      'text',
    ];
    for (const doc of odd) {
      const bytes = encode(doc);
      expect(readStreamBatch(bytes), JSON.stringify(doc)).toBeNull();
      expect(decodeStreamBatch(bytes)).toEqual(decodeStreamBatchReference(bytes));
    }
  });

  it('never throws on damaged bytes: truncated, cut or flipped batches decode as the reference says (not msgpack, named)', () => {
    fc.assert(
      fc.property(batch, fc.nat(), fc.integer({ min: 0, max: 255 }), (doc, at, byte) => {
        const bytes = encode(doc);
        const cut = bytes.subarray(0, at % bytes.length);
        const flipped = Uint8Array.from(bytes);
        flipped[at % bytes.length] = byte;
        for (const damaged of [cut, flipped]) {
          const d = decodeStreamBatch(damaged);
          expect(d).toEqual(decodeStreamBatchReference(damaged));
        }
        const truncated = decodeStreamBatch(cut);
        expect(truncated.batch).toBeNull();
        expect(truncated.issues[0]?.code).toBe('stream-not-msgpack');
        expect(truncated.issues[0]?.message).toMatch(/^payload \(\d+ bytes\) is not msgpack: /);
      }),
      { numRuns: 1_000 },
    );
  });
});
