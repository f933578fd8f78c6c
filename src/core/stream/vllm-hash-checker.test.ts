// When vLLM block hashes are verified, and when a miss is a mismatch rather than unverifiable (a mismatch pages).
import { describe, expect, it } from 'vitest';
import { vllmBlockHash, vllmIntBlockHash, vllmNoneHash, type VllmExtraKey } from '../hashing/vllm-block-hash.js';
import { streamStored } from '../../../test/helpers/kv-event-builders.js';
import type { StreamStored } from './decode-batch.js';
import { StreamEventConverter } from './to-kv-events.js';
import { VllmHashChecker } from './vllm-hash-checker.js';

const SEED = '0';
const tok = (...t: number[]): Uint32Array => Uint32Array.from(t);

interface Built {
  readonly event: StreamStored;
  readonly blocks: Uint32Array[];
  readonly hashes: Uint8Array[];
}

/** A BlockStored as vLLM publishes it: bytes hashes (or ints), extra_keys per block (or none: older vLLM). */
function stored(
  parent: Uint8Array | null,
  blocks: Uint32Array[],
  o: { ints?: boolean; extra?: (VllmExtraKey | null)[] | null; seed?: string; hashes?: Uint8Array[] } = {},
): Built {
  let p = parent ?? vllmNoneHash(o.seed ?? SEED);
  const hashes = o.hashes ?? blocks.map((b, i) => (p = vllmBlockHash(p, b, o.extra?.[i] ?? null)));
  const ints = o.ints === true;
  const event = streamStored({
    blockHashes: hashes.map(vllmIntBlockHash),
    parentHash: parent === null ? null : vllmIntBlockHash(parent),
    blockSize: blocks[0]!.length,
    extraKeys: (o.extra ?? []).some((k) => k !== null),
    blockHashBytes: ints ? null : hashes,
    parentHashBytes: ints || parent === null ? null : parent,
    blockExtraKeys: o.extra === undefined ? blocks.map(() => null) : o.extra,
  });
  return { event, blocks, hashes };
}

const run = (c: VllmHashChecker, b: Built, rank = 0) => c.check(rank, b.event, b.blocks);

describe('VllmHashChecker', () => {
  it('verifies a bytes-hash chain from the seeded root across events', () => {
    const c = new VllmHashChecker({ algo: 'sha256_cbor', seed: SEED });
    const a = stored(null, [tok(1, 2, 3, 4), tok(5, 6, 7, 8)]);
    expect(run(c, a)).toEqual(['match', 'match']);
    expect(run(c, stored(a.hashes[1]!, [tok(9, 10, 11, 12)]))).toEqual(['match']);
  });

  it('calls a tampered block a mismatch once whole-block hashing is established, and its child still verifies', () => {
    const c = new VllmHashChecker({ algo: 'sha256_cbor', seed: SEED });
    expect(run(c, stored(null, [tok(1, 2, 3, 4)]))).toEqual(['match']);
    const good = stored(null, [tok(1, 1, 1, 1), tok(2, 2, 2, 2), tok(3, 3, 3, 3)]);
    const bad = good.hashes.map((h, i) => (i === 1 ? Uint8Array.from(h, (x, j) => (j === 0 ? x ^ 1 : x)) : h));
    // the third block chains to the published (bad) second hash, so recompute it from there, as vLLM would have
    bad[2] = vllmBlockHash(bad[1]!, tok(3, 3, 3, 3));
    expect(run(c, stored(null, good.blocks, { hashes: bad }))).toEqual(['match', 'mismatch', 'match']);
  });

  it('says unverifiable, never mismatch, for roots under an unknown seed; children of bytes hashes still verify', () => {
    const c = new VllmHashChecker({ algo: 'sha256_cbor', seed: null });
    const a = stored(null, [tok(1, 2, 3, 4), tok(5, 6, 7, 8)], { seed: '4242' });
    expect(run(c, a)).toEqual(['unverifiable', 'match']);
  });

  it('calls roots under a wrong seed mismatches (after a child verified), since every block then fails for a router with that seed', () => {
    const c = new VllmHashChecker({ algo: 'sha256_cbor', seed: '1' });
    expect(run(c, stored(null, [tok(1, 2, 3, 4), tok(5, 6, 7, 8)]))).toEqual(['unverifiable', 'match']);
    expect(run(c, stored(null, [tok(9, 9, 9, 9)]))).toEqual(['mismatch']);
  });

  it('chains int hashes through the full hashes it computed, and never guesses past a parent it did not compute', () => {
    const c = new VllmHashChecker({ algo: 'sha256_cbor', seed: SEED });
    const a = stored(null, [tok(1, 2, 3, 4)], { ints: true });
    expect(run(c, a)).toEqual(['match']);
    expect(run(c, stored(a.hashes[0]!, [tok(5, 6, 7, 8)], { ints: true }))).toEqual(['match']);
    const stranger = vllmBlockHash(vllmNoneHash(SEED), tok(7, 7, 7, 7)); // stored before we subscribed
    expect(run(c, stored(stranger, [tok(8, 8, 8, 8)], { ints: true }))).toEqual(['unverifiable']);
    const wrongSeed = new VllmHashChecker({ algo: 'sha256_cbor', seed: '1' });
    expect(run(wrongSeed, stored(null, [tok(1, 2, 3, 4), tok(5, 6, 7, 8)], { ints: true }))).toEqual([
      'unverifiable',
      'unverifiable',
    ]);
  });

  it('recomputes with the published extra keys (cache_salt on the root, a LoRA name, a multimodal id)', () => {
    const c = new VllmHashChecker({ algo: 'sha256_cbor', seed: SEED });
    const extra: (VllmExtraKey | null)[] = [
      ['lora-a', 'tenant-A'],
      ['lora-a', ['mm-1', -2]],
    ];
    expect(run(c, stored(null, [tok(1, 2, 3, 4), tok(5, 6, 7, 8)], { extra }))).toEqual(['match', 'match']);
  });

  it('treats a miss without extra_keys on the wire (older vLLM) as unverifiable: the hash may cover keys not shown', () => {
    const c = new VllmHashChecker({ algo: 'sha256_cbor', seed: SEED });
    expect(run(c, stored(null, [tok(1, 2, 3, 4)]))).toEqual(['match']);
    const salted = stored(null, [tok(1, 2, 3, 4)], { extra: [['tenant-A']] });
    expect(run(c, { ...salted, event: { ...salted.event, blockExtraKeys: null } })).toEqual(['unverifiable']);
  });

  it('finds a finer hashing granularity (hash_block_size below block_size): the last finer hash, or their concatenation', () => {
    const blocks = [tok(1, 2, 3, 4, 5, 6, 7, 8), tok(9, 10, 11, 12, 13, 14, 15, 16)];
    const fine: Uint8Array[] = [];
    let p = vllmNoneHash(SEED);
    for (const b of blocks)
      for (const half of [b.subarray(0, 4), b.subarray(4)]) fine.push((p = vllmBlockHash(p, half)));
    const newer = new VllmHashChecker({ algo: 'sha256_cbor', seed: SEED });
    expect(run(newer, stored(null, blocks, { hashes: [fine[1]!, fine[3]!] }))).toEqual(['match', 'match']);
    const older = new VllmHashChecker({ algo: 'sha256_cbor', seed: SEED });
    const concat = (a: Uint8Array, b: Uint8Array): Uint8Array => Uint8Array.from([...a, ...b]);
    expect(
      run(older, stored(null, blocks, { hashes: [concat(fine[0]!, fine[1]!), concat(fine[2]!, fine[3]!)] })),
    ).toEqual(['match', 'match']);
  });

  it('verifies nothing for algorithms it does not reproduce, or when none was stated', () => {
    for (const algo of ['sha256', 'xxhash', 'xxhash_cbor', 'builtin', null] as const) {
      expect(run(new VllmHashChecker({ algo, seed: SEED }), stored(null, [tok(1, 2, 3, 4)]))).toEqual(['unverifiable']);
    }
  });

  it('forgets a rank on reset: int-hash children of blocks from before the restart are unverifiable', () => {
    const c = new VllmHashChecker({ algo: 'sha256_cbor', seed: SEED });
    const a = stored(null, [tok(1, 2, 3, 4)], { ints: true });
    run(c, a);
    c.resetRank(0);
    expect(run(c, stored(a.hashes[0]!, [tok(5, 6, 7, 8)], { ints: true }))).toEqual(['unverifiable']);
  });

  it('learns the granularity per block size: a group of another size is not taken to hash whole blocks', () => {
    const c = new VllmHashChecker({ algo: 'sha256_cbor', seed: SEED });
    expect(run(c, stored(null, [tok(1, 2, 3, 4)]))).toEqual(['match']); // 4-token blocks hash whole
    // an 8-token block hashed as two 4-token halves, with extra keys the halves cannot be given: unknown, not a mismatch
    const eight = tok(1, 2, 3, 4, 5, 6, 7, 8);
    const half = vllmBlockHash(vllmBlockHash(vllmNoneHash(SEED), eight.subarray(0, 4), ['lora']), eight.subarray(4), [
      'lora',
    ]);
    expect(run(c, stored(null, [eight], { hashes: [half], extra: [['lora']] }))).toEqual(['unverifiable']);
  });
});

describe('StreamEventConverter with vLLM hashing', () => {
  it('checks blocks before re-keying them, and leaves blocks of an inconsistent block_size unverifiable', () => {
    const conv = new StreamEventConverter('vllm', { vllmHashing: { algo: 'sha256_cbor', seed: SEED } });
    const a = stored(null, [tok(1, 2, 3, 4), tok(5, 6, 7, 8)]);
    const ok = conv.convert(
      { ts: 0, rank: null, events: [{ ...a.event, tokens: tok(1, 2, 3, 4, 5, 6, 7, 8), blockSize: 4 }] },
      0,
      null,
      'x',
    );
    expect(ok.engineChecks).toEqual([['match', 'match']]);
    // the tokens fit 2 blocks of 4, but the event says block_size 2: split by the tokens, never called a mismatch
    const odd = conv.convert(
      { ts: 0, rank: null, events: [{ ...a.event, tokens: tok(1, 2, 3, 4, 5, 6, 7, 8), blockSize: 2 }] },
      1,
      null,
      'x',
    );
    expect(odd.engineChecks).toEqual([['unverifiable', 'unverifiable']]);
    expect(odd.issues.map((i) => i.code)).toEqual(['stream-block-size-inconsistent']);
    expect(
      new StreamEventConverter('trtllm').convert({ ts: 0, rank: null, events: [] }, 0, null, 'x').engineChecks,
    ).toBeNull();
  });
});
