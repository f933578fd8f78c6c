import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeU64Base64, encodeU64Base64 } from './u64-base64.js';

describe('u64 base64', () => {
  it('round-trips any u64 array exactly', () => {
    fc.assert(
      fc.property(fc.array(fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), { maxLength: 40 }), (values) => {
        const keys = BigUint64Array.from(values);
        expect(Array.from(decodeU64Base64(encodeU64Base64(keys))!)).toEqual(values);
      }),
    );
  });

  it('matches standard base64 of the little-endian bytes', () => {
    const keys = BigUint64Array.from([1n, 6875034662206558884n]);
    const bytes = new Uint8Array(keys.buffer);
    expect(encodeU64Base64(keys)).toBe(btoa(String.fromCharCode(...bytes)));
  });

  it.each(['abc', 'AAAA', '!!!!!!!!!!!!', 'AAAAAAAA'])('rejects %s', (text) => {
    expect(decodeU64Base64(text)).toBeNull();
  });
});
