import { Encoder } from '@msgpack/msgpack';
import { describe, expect, it } from 'vitest';
import { decodeStreamBatch } from './decode-batch.js';
import { decodeLiveMessage, decodeReplayMessage, encodeSeq, END_SEQ_FRAME, replayRequest } from './stream-frames.js';

const encode = (v: unknown): Uint8Array => new Encoder({ useBigInt64: true }).encode(v);
const BIG = 2n ** 63n + 12345n; // above 2^63: negative as int64

describe('decodeStreamBatch', () => {
  it('reads a TensorRT-LLM batch: [ts, events, rank], tagged maps, signed int64 hashes taken modulo 2^64', () => {
    const signed = BigInt.asIntN(64, BIG);
    expect(signed < 0n).toBe(true);
    const d = decodeStreamBatch(
      encode([
        1.5,
        [
          {
            type: 'BlockStored',
            block_hashes: [signed, 7],
            parent_block_hash: -1,
            token_ids: [1, 2, 3, 4],
            block_size: 2,
            lora_id: null,
            medium: 'GPU',
            lora_name: null,
          },
          { type: 'BlockRemoved', block_hashes: [signed], medium: 'GPU' },
        ],
        3,
      ]),
    );
    expect(d.issues).toEqual([]);
    expect(d.batch?.rank).toBe(3);
    const [stored, removed] = d.batch!.events;
    expect(stored).toMatchObject({ type: 'stored', blockHashes: [BIG, 7n], parentHash: 2n ** 64n - 1n, blockSize: 2 });
    expect(stored?.type === 'stored' && Array.from(stored.tokens!)).toEqual([1, 2, 3, 4]);
    expect(removed).toEqual({ type: 'removed', blockHashes: [BIG], medium: 'GPU', groupIdx: null });
  });

  it("reads SGLang's EAGLE bigram pages ([token, next] pairs) and its salt, instead of dropping the event", () => {
    // mem_cache/events.py record_store: page_tokens = [(raw[j], raw[j + 1]) for j in range(start, end)]
    const d = decodeStreamBatch(
      encode([
        2.5,
        [
          {
            type: 'BlockStored',
            block_hashes: [5, 6],
            parent_block_hash: null,
            token_ids: [
              [10, 11],
              [11, 12],
              [12, 13],
              [13, 14],
            ],
            block_size: 2,
            lora_id: null,
            medium: 'GPU',
            cache_salt: 'tenant',
            session_id: null,
            lora_name: 'adapter',
          },
        ],
      ]),
    );
    expect(d.issues).toEqual([]);
    const [stored] = d.batch!.events;
    expect(stored?.type === 'stored' && Array.from(stored.tokens!)).toEqual([10, 11, 12, 13]);
    expect(stored).toMatchObject({ cacheSalt: 'tenant', loraName: 'adapter', blockHashes: [5n, 6n] });
  });

  it('reads a newer vLLM map batch and an older vLLM / SGLang positional one', () => {
    const map = decodeStreamBatch(encode({ ts: 2, events: [{ type: 'AllBlocksCleared' }], data_parallel_rank: 1 }));
    expect(map.batch).toEqual({ ts: 2, rank: 1, events: [{ type: 'all_cleared' }] });
    const legacy = decodeStreamBatch(
      encode([
        3,
        [
          ['BlockStored', [BIG], null, [9, 9], 2, null, 'CPU'],
          ['BlockRemoved', [5]],
        ],
      ]),
    );
    expect(legacy.issues).toEqual([]);
    expect(legacy.batch?.rank).toBeNull();
    expect(legacy.batch?.events[0]).toMatchObject({
      type: 'stored',
      blockHashes: [BIG],
      parentHash: null,
      medium: 'CPU',
    });
    expect(legacy.batch?.events[1]).toEqual({ type: 'removed', blockHashes: [5n], medium: null, groupIdx: null });
  });

  it('takes a bytes hash as its low 8 bytes big-endian (vLLM without int block hashes)', () => {
    const bytes = new Uint8Array(32).fill(0);
    bytes[24] = 0x80;
    bytes[31] = 0x01;
    const d = decodeStreamBatch(encode([0, [{ type: 'BlockRemoved', block_hashes: [bytes], medium: 'GPU' }]]));
    expect(d.batch?.events[0]).toMatchObject({ blockHashes: [2n ** 63n + 1n] });
  });

  it("keeps vLLM's bytes hashes in full and its per-block extra_keys, for recomputing them", () => {
    const h = (b: number): Uint8Array => new Uint8Array(32).fill(b);
    const d = decodeStreamBatch(
      encode({
        ts: 0,
        events: [
          {
            type: 'BlockStored',
            block_hashes: [h(1), h(2)],
            parent_block_hash: h(3),
            token_ids: [1, 2, 3, 4],
            block_size: 2,
            lora_id: null,
            medium: 'GPU',
            lora_name: 'l',
            extra_keys: [
              ['l', 'salt'],
              ['l', ['mm', -1]],
            ],
          },
        ],
      }),
    );
    const e = d.batch!.events[0]!;
    expect(
      e.type === 'stored' && {
        bytes: e.blockHashBytes?.map((b) => b?.[0]),
        parent: e.parentHashBytes?.length,
        extra: e.blockExtraKeys,
        any: e.extraKeys,
      },
    ).toEqual({
      bytes: [1, 2],
      parent: 32,
      extra: [
        ['l', 'salt'],
        ['l', ['mm', -1]],
      ],
      any: true,
    });
    // int hashes, extra_keys absent (older vLLM) or not one per block, or holding a float: nothing kept to recompute with
    const ints = decodeStreamBatch(encode([0, [['BlockStored', [5, 6], 4, [1, 2, 3, 4], 2, null, 'GPU']]])).batch!
      .events[0]!;
    expect(ints.type === 'stored' && [ints.blockHashBytes, ints.parentHashBytes, ints.blockExtraKeys]).toEqual([
      null,
      null,
      null,
    ]);
    const odd = decodeStreamBatch(
      encode({
        ts: 0,
        events: [
          {
            type: 'BlockStored',
            block_hashes: [5],
            parent_block_hash: null,
            token_ids: [1, 2],
            block_size: 2,
            extra_keys: [[0.5]],
          },
        ],
      }),
    ).batch!.events[0]!;
    expect(odd.type === 'stored' && odd.blockExtraKeys).toBeNull();
  });

  it('skips a bad event with an issue naming its position and keeps the others', () => {
    const d = decodeStreamBatch(
      encode([
        0,
        [
          { type: 'BlockStored', block_hashes: [1.5], token_ids: [], block_size: 1 },
          { type: 'Nope' },
          { type: 'BlockRemoved', block_hashes: [1] },
        ],
      ]),
    );
    expect(d.issues.map((i) => [i.code, i.path])).toEqual([
      ['hash-float', '$.events[0].block_hashes[0]'],
      ['unknown-event-type', '$.events[1].type'],
    ]);
    expect(d.batch?.events).toHaveLength(1);
  });

  it('rejects a payload that is not msgpack or not a batch, without throwing', () => {
    expect(decodeStreamBatch(new Uint8Array([0xc1])).issues[0]?.code).toBe('stream-not-msgpack');
    expect(decodeStreamBatch(new Uint8Array([0x92, 0x01])).issues[0]?.code).toBe('stream-not-msgpack');
    expect(decodeStreamBatch(encode('hello')).issues[0]?.code).toBe('stream-bad-batch');
  });
});

describe('stream frames', () => {
  it('reads live and replay messages of both replay forms and the end marker', () => {
    const payload = new Uint8Array([1]);
    const live = decodeLiveMessage([new TextEncoder().encode('kv'), encodeSeq(2n ** 63n), payload]);
    expect(live).toEqual({ ok: true, value: { topic: 'kv', seq: 2n ** 63n, publisherId: null, payload } });
    expect(decodeLiveMessage([encodeSeq(1n), payload]).ok).toBe(false);
    expect(decodeLiveMessage([new Uint8Array(0), new Uint8Array(3), payload])).toMatchObject({
      ok: false,
      issue: { code: 'stream-bad-seq' },
    });
    const empty = new Uint8Array(0);
    expect(decodeReplayMessage([empty, empty, encodeSeq(4n), payload])).toMatchObject({ ok: true, value: { seq: 4n } }); // TensorRT-LLM
    expect(decodeReplayMessage([empty, encodeSeq(4n), payload])).toMatchObject({ ok: true, value: { seq: 4n } }); // vLLM, SGLang
    expect(decodeReplayMessage([empty, empty, END_SEQ_FRAME, empty])).toEqual({ ok: true, value: null });
    expect(decodeReplayMessage([empty, END_SEQ_FRAME, empty])).toEqual({ ok: true, value: null });
    expect(replayRequest(258n).map((f) => Array.from(f))).toEqual([[], [0, 0, 0, 0, 0, 0, 1, 2]]);
  });
});
