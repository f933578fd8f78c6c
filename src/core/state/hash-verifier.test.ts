import { describe, expect, it } from 'vitest';
import { wireHashBlocks } from '../hashing/block-key.js';
import type { StoredBlock, WireBlockHash } from '../wire/kv-event.js';
import { storedBlock } from '../../../test/helpers/kv-event-builders.js';
import { HashVerifier } from './hash-verifier.js';

function block(blockHash: WireBlockHash, tokens: number[], over: Partial<StoredBlock> = {}): StoredBlock {
  return { ...storedBlock(blockHash, 0, tokens), ...over };
}

describe('HashVerifier', () => {
  it('matches the TensorRT-LLM v1 vectors, chained', () => {
    const v = new HashVerifier();
    const r = v.check(
      null,
      [block(924206229973855n, [1, 2, 3, 4]), block(6875034662206558884n, [5, 6])],
      'v1_block_key',
    );
    expect(r.checks).toEqual(['match', 'match']);
    expect(r.tokenCounts).toEqual([4, 2]);
    expect(r.alternative).toBeNull();
  });

  it('continues a chain from an event parent hash', () => {
    const r = new HashVerifier().check(924206229973855n, [block(6875034662206558884n, [5, 6])], 'v1_block_key');
    expect(r.checks).toEqual(['match']);
  });

  it('flags a mismatch without cascading to the next block', () => {
    const r = new HashVerifier().check(
      null,
      [block(1n, [1, 2, 3, 4]), block(6875034662206558884n, [5, 6])],
      'v1_block_key',
    );
    expect(r.checks).toEqual(['mismatch', 'mismatch']);
    const r2 = new HashVerifier().check(
      924206229973855n,
      [block(5n, [5, 6]), block(wireHashBlocks([[7]], 'v1_block_key')[0]!, [7])],
      'v1_block_key',
    );
    expect(r2.checks[0]).toBe('mismatch');
  });

  it('names the algorithm that does reproduce a mismatching root block', () => {
    const [h1, h2] = wireHashBlocks(
      [
        [1, 2, 3, 4],
        [5, 6],
      ],
      'v2_sha256_64',
    );
    const r = new HashVerifier().check(null, [block(h1!, [1, 2, 3, 4]), block(h2!, [5, 6])], 'v1_block_key');
    expect(r.checks[0]).toBe('mismatch');
    expect(r.alternative).toBe('v2_sha256_64');
  });

  it('verifies v2_sha256 hex chains and v2_sha256_64 chains whose full parent it computed', () => {
    const hex = wireHashBlocks(
      [
        [1, 2, 3, 4],
        [5, 6],
      ],
      'v2_sha256',
    );
    expect(
      new HashVerifier().check(null, [block(hex[0]!, [1, 2, 3, 4]), block(hex[1]!, [5, 6])], 'v2_sha256').checks,
    ).toEqual(['match', 'match']);
    const short = wireHashBlocks(
      [
        [1, 2, 3, 4],
        [5, 6],
      ],
      'v2_sha256_64',
    );
    const v = new HashVerifier();
    expect(v.check(null, [block(short[0]!, [1, 2, 3, 4])], 'v2_sha256_64').checks).toEqual(['match']);
    expect(v.check(short[0]!, [block(short[1]!, [5, 6])], 'v2_sha256_64').checks).toEqual(['match']);
    // a truncated parent never seen in full cannot be extended
    expect(new HashVerifier().check(short[0]!, [block(short[1]!, [5, 6])], 'v2_sha256_64').checks).toEqual([
      'unverifiable',
    ]);
  });

  it('is unverifiable, not a mismatch, when inputs are missing or the salt generation is unknown', () => {
    const v = new HashVerifier();
    expect(
      v.check(null, [block(1n, [1], { mmKeys: [{ hash: 'ab', startOffset: 0 }] })], 'v1_block_key').checks,
    ).toEqual(['unverifiable']);
    expect(v.check(null, [block(1n, [1], { tokenExtraIds: Uint32Array.from([3]) })], 'v1_block_key').checks).toEqual([
      'unverifiable',
    ]);
    expect(v.check(null, [block(1n, [1, 2, 3, 4], { cacheSalt: 'tenant-A' })], 'v1_block_key').checks).toEqual([
      'unverifiable',
    ]);
  });
});
