// The WebAssembly and JavaScript token loops are interchangeable: same seed out for any tokens and seed in,
// including token ids outside uint32 (both reduce mod 2^32), number[] and Uint32Array input, and blocks large
// enough to make the WebAssembly memory grow.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createWasmTokenMixer, mixTokensJs } from './v1-token-mix.js';

const wasm = createWasmTokenMixer();

function run(
  mixer: typeof mixTokensJs,
  tokens: ArrayLike<number>,
  start: number,
  end: number,
  hi: number,
  lo: number,
): [number, number] {
  const out = new Uint32Array(2);
  mixer(tokens, start, end, hi, lo, out);
  return [out[0]!, out[1]!];
}

const u32 = fc.integer({ min: 0, max: 0xffff_ffff });

describe('v1 token mixers', () => {
  it('WebAssembly is available on this platform (the fast path is what ships)', () => {
    expect(wasm).not.toBeNull();
  });

  it('agree on any Uint32Array slice and seed', () => {
    fc.assert(
      fc.property(fc.array(u32, { maxLength: 300 }), u32, u32, fc.nat(), (tokens, hi, lo, cut) => {
        const arr = Uint32Array.from(tokens);
        const start = tokens.length === 0 ? 0 : cut % tokens.length;
        expect(run(wasm!, arr, start, arr.length, hi, lo)).toEqual(run(mixTokensJs, arr, start, arr.length, hi, lo));
      }),
      { numRuns: 300 },
    );
  });

  it('agree on number[] input with ids outside uint32 (reduced mod 2^32 by both)', () => {
    const id = fc.oneof(
      u32,
      fc.integer({ min: -0x8000_0000, max: -1 }),
      fc.constantFrom(2 ** 32, 2 ** 32 + 7, 2 ** 40 + 3),
    );
    fc.assert(
      fc.property(fc.array(id, { maxLength: 64 }), u32, u32, (tokens, hi, lo) => {
        expect(run(wasm!, tokens, 0, tokens.length, hi, lo)).toEqual(
          run(mixTokensJs, tokens, 0, tokens.length, hi, lo),
        );
      }),
    );
  });

  it('agree on a block larger than the initial WebAssembly memory, and again afterwards', () => {
    const big = new Uint32Array(100_000).map((_, i) => Math.imul(i, 2654435761) >>> 0);
    expect(run(wasm!, big, 0, big.length, 1, 2)).toEqual(run(mixTokensJs, big, 0, big.length, 1, 2));
    expect(run(wasm!, big, 5, 9, 3, 4)).toEqual(run(mixTokensJs, big, 5, 9, 3, 4));
  });
});
