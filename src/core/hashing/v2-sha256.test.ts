import { describe, expect, it } from 'vitest';
import { cacheSaltId } from './cache-salt.js';
import { blockKey64, blockKeyChain, wireHashChain } from './block-key.js';
import { keyToHex, truncateKeyToU64, v2Chain, v2RootKey } from './v2-sha256.js';

describe('v2 keys', () => {
  it('truncates to the first 8 bytes big-endian, unsigned', () => {
    expect(truncateKeyToU64(Uint8Array.from([0x80, ...new Array<number>(31).fill(0)]))).toBe(1n << 63n);
    expect(truncateKeyToU64(new Uint8Array(32).fill(0xff))).toBe((1n << 64n) - 1n);
  });

  it('salted root differs from the unsalted root and starts as documented', () => {
    expect(keyToHex(v2RootKey({ saltId: 123n }))).toMatch(/^18027f2e.*279b$/);
  });

  it('gives the same table key to the v2_sha256 and v2_sha256_64 forms of a block', () => {
    const tokens = Array.from({ length: 40 }, (_, i) => i + 1);
    const hex = wireHashChain(tokens, 16, 'v2_sha256');
    const u64 = wireHashChain(tokens, 16, 'v2_sha256_64');
    expect(hex.map(blockKey64)).toEqual(u64);
    expect(Array.from(blockKeyChain(tokens, 16, 'v2_sha256'))).toEqual(u64);
    expect(v2Chain(tokens, 16)).toHaveLength(3);
  });
});

describe('cacheSaltId', () => {
  it('is sha256(utf8)[:8] little-endian', () => {
    expect(cacheSaltId('tenant-A')).toBe(10590430051267512242n);
  });
});
