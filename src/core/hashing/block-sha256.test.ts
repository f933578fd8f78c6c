import { sha256 } from '@noble/hashes/sha2.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BlockSha256 } from './block-sha256.js';

/** The message the V2 block key hashes, built the plain way, through @noble/hashes' SHA-256. */
function reference(parent: Uint8Array, tokens: readonly number[], start: number, end: number): Uint8Array {
  const message = new Uint8Array(32 + 4 * (end - start));
  message.set(parent, 0);
  const view = new DataView(message.buffer);
  for (let i = start; i < end; i++) view.setUint32(32 + 4 * (i - start), tokens[i]! >>> 0, true);
  return sha256(message);
}

const hasher = new BlockSha256();
const blockSha256 = (parent: Uint8Array, tokens: ArrayLike<number>, start: number, end: number): Uint8Array =>
  hasher.hash(parent, tokens, start, end);

describe('blockSha256', () => {
  it('is SHA-256 of parent ‖ tokens as uint32 LE, for every length (padding across block ends) and token value', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.array(fc.integer({ min: 0, max: 2 ** 32 - 1 }), { maxLength: 300 }),
        fc.nat(),
        fc.nat(),
        (parent, tokens, a, b) => {
          const start = tokens.length === 0 ? 0 : a % (tokens.length + 1);
          const end = start + (tokens.length - start === 0 ? 0 : b % (tokens.length - start + 1));
          expect(blockSha256(parent, tokens, start, end)).toEqual(reference(parent, tokens, start, end));
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('gives each call its own result (the word buffer is reused, the key is not)', () => {
    const parent = new Uint8Array(32).fill(7);
    const first = blockSha256(parent, [1, 2, 3], 0, 3);
    const copy = Uint8Array.from(first);
    blockSha256(
      parent,
      Array.from({ length: 500 }, (_, i) => i),
      0,
      500,
    );
    expect(first).toEqual(copy);
    expect(blockSha256(parent, new Uint32Array([1, 2, 3]), 0, 3)).toEqual(copy);
  });
});
