// Property tests: the uint32-halves implementation against a straightforward BigInt transcription of
// docs/trtllm-wire.md §1.2, over random tokens, parents, salts and lora ids.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hashV1Block, hashV1Chain } from './v1-block-key.js';

const M64 = (1n << 64n) - 1n;
const M32 = (1n << 32n) - 1n;

function refMix32(value: bigint, seed: bigint): bigint {
  let v = value & M32;
  v = (((v >> 16n) ^ v) * 0x045d9f3bn) & M32;
  v = (((v >> 16n) ^ v) * 0x045d9f3bn) & M32;
  v = (v >> 16n) ^ v;
  v = (v + 0x9e3779b9n) & M32;
  return seed ^ ((v + (seed << 6n) + (seed >> 2n)) & M64);
}

function refMix64(value: bigint, seed: bigint): bigint {
  let v = value & M64;
  v = ((v ^ (v >> 30n)) * 0xbf58476d1ce4e5b9n) & M64;
  v = ((v ^ (v >> 27n)) * 0x94d049bb133111ebn) & M64;
  v = v ^ (v >> 31n);
  return seed ^ ((v + 0x9e3779b9n + (seed << 6n) + (seed >> 2n)) & M64);
}

function refHash(tokens: readonly number[], parent: bigint, lora: bigint | null, salt: bigint | null): bigint {
  let seed = (BigInt(tokens.length) ^ ((parent * 0xbf58476d1ce4e5b9n) & M64)) & M64;
  if (parent === 0n && salt !== null) seed = refMix64(salt, seed);
  for (const t of tokens) seed = refMix32(BigInt(t), seed);
  if (lora !== null) seed = refMix64(lora, seed);
  return seed;
}

const u64 = fc.bigInt({ min: 0n, max: M64 });
const tokenArb = fc.oneof(
  fc.integer({ min: 0, max: 0xffff_ffff }),
  fc.constantFrom(0, 1, 0x7fff_ffff, 0x8000_0000, 0xffff_ffff),
);

describe('hashV1Block', () => {
  it('equals the BigInt reference for any tokens, parent, salt and lora', () => {
    fc.assert(
      fc.property(
        fc.array(tokenArb, { maxLength: 300 }),
        fc.oneof(fc.constant(0n), u64),
        fc.option(u64),
        fc.option(u64),
        (tokens, parent, salt, lora) => {
          expect(hashV1Block(tokens, parent, { saltId: salt, loraId: lora })).toBe(refHash(tokens, parent, lora, salt));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('accepts Uint32Array and plain arrays alike', () => {
    fc.assert(
      fc.property(fc.array(tokenArb, { maxLength: 64 }), u64, (tokens, parent) => {
        expect(hashV1Block(Uint32Array.from(tokens), parent)).toBe(hashV1Block(tokens, parent));
      }),
    );
  });
});

describe('hashV1Chain', () => {
  it('chains blocks of blockSize with a partial tail, salt only on the first block', () => {
    fc.assert(
      fc.property(
        fc.array(tokenArb, { maxLength: 400 }),
        fc.integer({ min: 1, max: 70 }),
        fc.option(u64),
        (tokens, blockSize, salt) => {
          const expected: bigint[] = [];
          let parent = 0n;
          for (let i = 0; i < tokens.length; i += blockSize) {
            parent = refHash(tokens.slice(i, i + blockSize), parent, null, salt);
            expected.push(parent);
          }
          expect(Array.from(hashV1Chain(Uint32Array.from(tokens), blockSize, { saltId: salt }))).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('continues a chain from a given parent', () => {
    const tokens = Uint32Array.from({ length: 300 }, (_, i) => i * 7919);
    const whole = hashV1Chain(tokens, 128);
    const tail = hashV1Chain(tokens.subarray(128), 128, {}, whole[0]);
    expect(Array.from(tail)).toEqual(Array.from(whole.subarray(1)));
  });
});
