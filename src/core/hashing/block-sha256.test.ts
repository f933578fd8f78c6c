import { sha256 } from '@noble/hashes/sha2.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BlockSha256 } from './block-sha256.js';
import { createSha256Kernel } from './block-sha256-kernel.js';

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

describe.each([
  ['the WebAssembly kernel', {}],
  ['the JavaScript loop', { wasm: false }],
] as const)('blockSha256 through %s', (_, options) => {
  it('is SHA-256 of parent ‖ tokens as uint32 LE, for every length (padding across block ends) and token value', () => {
    const hasher = new BlockSha256(options);
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.array(fc.integer({ min: 0, max: 2 ** 32 - 1 }), { maxLength: 300 }),
        fc.nat(),
        fc.nat(),
        (parent, tokens, a, b) => {
          const start = tokens.length === 0 ? 0 : a % (tokens.length + 1);
          const end = start + (tokens.length - start === 0 ? 0 : b % (tokens.length - start + 1));
          expect(hasher.hash(parent, tokens, start, end)).toEqual(reference(parent, tokens, start, end));
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it("hashes a block longer than the kernel's first memory page (it grows), and the next short one after it", () => {
    const hasher = new BlockSha256(options);
    const parent = Uint8Array.from({ length: 32 }, (_, i) => 255 - i);
    const long = Array.from({ length: 40_000 }, (_, i) => (i * 2_654_435_761) >>> 0);
    expect(hasher.hash(parent, long, 3, 40_000)).toEqual(reference(parent, long, 3, 40_000));
    expect(hasher.hash(parent, long, 0, 16)).toEqual(reference(parent, long, 0, 16));
  });
});

describe('blockSha256', () => {
  it('runs the kernel here (Node 20 has WebAssembly): the tests above reach both paths', () => {
    expect(createSha256Kernel()).not.toBeNull();
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
