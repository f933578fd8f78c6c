import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { U64_MAX, decimalFitsU64 } from './u64-decimal.js';

describe('decimalFitsU64', () => {
  it.each([
    ['0', true],
    ['18446744073709551615', true],
    ['18446744073709551616', false],
    ['99999999999999999999', false],
    ['100000000000000000000', false],
    ['000018446744073709551615', true],
    ['000018446744073709551616', false],
  ])('%s fits: %s', (text, fits) => {
    expect(decimalFitsU64(text)).toBe(fits);
  });

  it('agrees with a BigInt comparison, also on a span of a longer text', () => {
    const near = fc.oneof(
      fc.bigInt({ min: 0n, max: U64_MAX * 4n }),
      fc.bigInt({ min: U64_MAX - 1000n, max: U64_MAX + 1000n }),
    );
    fc.assert(
      fc.property(near, fc.nat(3), (value, zeros) => {
        const digits = '0'.repeat(zeros) + value.toString(10);
        const text = `[${digits},1]`;
        expect(decimalFitsU64(text, 1, 1 + digits.length)).toBe(value <= U64_MAX);
        expect(decimalFitsU64(digits)).toBe(value <= U64_MAX);
      }),
    );
  });
});
