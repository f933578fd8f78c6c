import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KvsentinelError } from '../errors.js';
import { U64SlotMap } from './u64-slot-map.js';

const halves = (k: bigint): [number, number] => [Number(k >> 32n), Number(k & 0xffff_ffffn)];

describe('U64SlotMap', () => {
  it('agrees with a Map under inserts and deletes dense enough to form long clusters (backward-shift deletion)', () => {
    // few distinct keys, many deletes: clusters form, wrap the table's end and are shifted back over and over
    const key = fc.oneof(
      fc.constantFrom(0n, 2n ** 64n - 1n, 1n << 32n),
      fc.integer({ min: 0, max: 60 }).map((n) => BigInt(n) << 40n),
    );
    const op = fc.record({ del: fc.boolean(), key, value: fc.integer({ min: 0, max: 0x7fff_ffff }) });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 1500 }), (list) => {
        const map = new U64SlotMap();
        const model = new Map<bigint, number>();
        for (const o of list) {
          const [hi, lo] = halves(o.key);
          if (o.del) {
            expect(map.delete(hi, lo)).toBe(model.get(o.key) ?? -1);
            model.delete(o.key);
          } else {
            // put answers what set replaced
            expect(map.put(hi, lo, o.value)).toBe(model.get(o.key) ?? -1);
            model.set(o.key, o.value);
          }
          expect(map.size).toBe(model.size);
        }
        for (const [k, v] of model) expect(map.get(...halves(k))).toBe(v);
        for (let n = 0; n <= 60; n++)
          if (!model.has(BigInt(n) << 40n)) expect(map.get(...halves(BigInt(n) << 40n))).toBe(-1);
      }),
      { numRuns: 300 },
    );
  });

  it('rejects a value that is not a non-negative int32', () => {
    const map = new U64SlotMap();
    expect(() => map.set(0, 1, -1)).toThrow(KvsentinelError);
    expect(() => map.set(0, 1, 2 ** 31)).toThrow(KvsentinelError);
    expect(() => map.set(0, 1, 0.5)).toThrow(KvsentinelError);
  });
});
