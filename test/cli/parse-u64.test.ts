import { describe, expect, it } from 'vitest';
import { parseU64Option } from '../../src/cli/parse-u64.js';

describe('parseU64Option', () => {
  it('accepts decimal and 0x-hex up to 2^64-1', () => {
    expect(parseU64Option('--salt-id', '18446744073709551615')).toBe(18446744073709551615n);
    expect(parseU64Option('--salt-id', '0xffffffffffffffff')).toBe(18446744073709551615n);
    expect(parseU64Option('--salt-id', '007')).toBe(7n);
  });

  it('names the option when the value is above 2^64-1 or not an integer', () => {
    expect(() => parseU64Option('--salt-id', '18446744073709551616')).toThrow(
      "--salt-id: '18446744073709551616' exceeds 2^64-1",
    );
    expect(() => parseU64Option('--lora-id', '0x10000000000000000')).toThrow(
      "--lora-id: '0x10000000000000000' exceeds 2^64-1",
    );
    expect(() => parseU64Option('--lora-id', '-1')).toThrow('is not an unsigned 64-bit integer');
  });
});
