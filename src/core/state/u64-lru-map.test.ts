import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KvsentinelError } from '../errors.js';
import { LruMap } from './lru-map.js';
import { U64LruMap } from './u64-lru-map.js';

// keys that stress the flat index: 0 (an all-zero slot is not "empty" here), 2^64-1, keys equal in one half
const SPECIAL = [0n, 1n, 2n ** 64n - 1n, 2n ** 32n, 2n ** 32n + 1n, 5n << 32n, (5n << 32n) | 7n, 2n ** 63n];
const key = fc.oneof(
  fc.constantFrom(...SPECIAL),
  fc.integer({ min: 0, max: 150 }).map((n) => BigInt.asUintN(64, BigInt(n) * 0x9e3779b97f4a7c15n)),
);

type Op = { op: 'get' | 'peek' | 'has' | 'delete' | 'oldest'; key: bigint } | { op: 'set'; key: bigint; value: number };

const ops = fc.array(
  fc.oneof(
    fc.record({
      op: fc.constantFrom('get' as const, 'peek' as const, 'has' as const, 'delete' as const, 'oldest' as const),
      key,
    }),
    fc.record({ op: fc.constant('set' as const), key, value: fc.integer() }),
    fc.record({ op: fc.constant('set' as const), key, value: fc.integer() }),
  ),
  { maxLength: 800 },
);

describe('U64LruMap', () => {
  it('keeps LruMap’s contract for u64 keys under any mix of operations, growing past its first slots', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 120 }), ops, (cap, list: Op[]) => {
        const flat = new U64LruMap<number>(cap);
        const reference = new LruMap<bigint, number>(cap);
        for (const o of list) {
          if (o.op === 'set') expect(flat.set(o.key, o.value)).toEqual(reference.set(o.key, o.value));
          else if (o.op === 'get') expect(flat.get(o.key)).toBe(reference.get(o.key));
          else if (o.op === 'peek') expect(flat.peek(o.key)).toBe(reference.peek(o.key));
          else if (o.op === 'has') expect(flat.has(o.key)).toBe(reference.has(o.key));
          else if (o.op === 'delete') expect(flat.delete(o.key)).toBe(reference.delete(o.key));
          else expect(flat.oldest()).toEqual(reference.oldest());
          expect(flat.size).toBe(reference.size);
        }
        expect([...flat.entries()]).toEqual([...reference.entries()]);
        expect([...flat.values()]).toEqual([...reference.values()]);
        expect(flat.dropped).toBe(reference.dropped);
      }),
      { numRuns: 300 },
    );
  });

  it('holds a stream’s churn: a full map evicting one entry per insert keeps exactly the newest cap keys', () => {
    const cap = 4096;
    const lru = new U64LruMap<number>(cap);
    const hash = (n: number): bigint => BigInt.asUintN(64, BigInt(n + 1) * 0x9e3779b97f4a7c15n);
    for (let n = 0; n < 50_000; n++) {
      lru.set(hash(n), n);
      // removals of the store 256 before, as an engine evicts
      if (n >= 256 && n % 3 === 0) lru.delete(hash(n - 256));
    }
    expect(lru.size).toBe(cap);
    for (let n = 50_000 - 100; n < 50_000; n++) expect(lru.peek(hash(n))).toBe(n);
    expect(lru.has(hash(0))).toBe(false);
  });

  it('rejects a key outside u64 and a cap that is not a positive int32, as internal errors', () => {
    const lru = new U64LruMap<number>(2);
    expect(() => lru.set(-1n, 0)).toThrow(KvsentinelError);
    expect(() => lru.get(2n ** 64n)).toThrow(/u64 key out of range/);
    expect(() => new U64LruMap(0)).toThrow(KvsentinelError);
    expect(() => new U64LruMap(1.5)).toThrow(KvsentinelError);
  });
});
