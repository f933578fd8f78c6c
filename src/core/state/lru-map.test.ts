import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LruMap } from './lru-map.js';

/** The same contract the slow way: an array of [key, value], least recently used first. */
class ModelLru {
  entries: [number, number][] = [];
  dropped = 0;
  readonly cap: number;
  constructor(cap: number) {
    this.cap = cap;
  }
  #at(key: number): number {
    return this.entries.findIndex(([k]) => k === key);
  }
  get(key: number): number | undefined {
    const i = this.#at(key);
    if (i < 0) return undefined;
    const [e] = this.entries.splice(i, 1);
    this.entries.push(e!);
    return e![1];
  }
  peek(key: number): number | undefined {
    return this.entries[this.#at(key)]?.[1];
  }
  set(key: number, value: number): [number, number] | undefined {
    const i = this.#at(key);
    if (i >= 0) this.entries.splice(i, 1);
    this.entries.push([key, value]);
    if (this.entries.length <= this.cap) return undefined;
    this.dropped++;
    return this.entries.shift();
  }
  delete(key: number): boolean {
    const i = this.#at(key);
    if (i >= 0) this.entries.splice(i, 1);
    return i >= 0;
  }
}

type Op = { op: 'get' | 'peek' | 'delete' | 'oldest'; key: number } | { op: 'set'; key: number; value: number };

const ops = fc.array(
  fc.oneof(
    fc.record({
      op: fc.constantFrom('get' as const, 'peek' as const, 'delete' as const, 'oldest' as const),
      key: fc.integer({ min: 0, max: 40 }),
    }),
    fc.record({ op: fc.constant('set' as const), key: fc.integer({ min: 0, max: 40 }), value: fc.integer() }),
  ),
  { maxLength: 400 },
);

describe('LruMap', () => {
  it('behaves as a least-recently-used list under any mix of operations (the kept eviction cursor included)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 12 }), ops, (cap, list: Op[]) => {
        const lru = new LruMap<number, number>(cap);
        const model = new ModelLru(cap);
        for (const o of list) {
          if (o.op === 'set') expect(lru.set(o.key, o.value)).toEqual(model.set(o.key, o.value));
          else if (o.op === 'get') expect(lru.get(o.key)).toBe(model.get(o.key));
          else if (o.op === 'peek') expect(lru.peek(o.key)).toBe(model.peek(o.key));
          else if (o.op === 'delete') expect(lru.delete(o.key)).toBe(model.delete(o.key));
          else expect(lru.oldest()).toEqual(model.entries[0]);
          expect(lru.size).toBe(model.entries.length);
        }
        expect([...lru.entries()]).toEqual(model.entries);
        expect(lru.dropped).toBe(model.dropped);
      }),
      { numRuns: 300 },
    );
  });

  it('evicts in insertion order when full, also after emptying and refilling', () => {
    const lru = new LruMap<bigint, string>(2);
    lru.set(1n, 'a');
    lru.set(2n, 'b');
    expect(lru.set(3n, 'c')).toEqual([1n, 'a']);
    lru.delete(2n);
    lru.delete(3n);
    expect(lru.oldest()).toBeUndefined();
    lru.set(4n, 'd');
    lru.set(5n, 'e');
    expect(lru.set(6n, 'f')).toEqual([4n, 'd']);
    expect(lru.dropped).toBe(2);
  });

  it('deletes the oldest entries while they are stale, and stops at the first fresh one', () => {
    const lru = new LruMap<string, number>(8);
    for (const [k, t] of [
      ['a', 1],
      ['b', 2],
      ['c', 9],
      ['d', 3],
    ] as const)
      lru.set(k, t);
    lru.get('a'); // a is the newest now: b leads
    expect(lru.deleteOldestWhile((t) => t < 5)).toBe(1);
    expect([...lru.entries()].map(([k]) => k)).toEqual(['c', 'd', 'a']);
    expect(lru.deleteOldestWhile((t) => t < 100)).toBe(3);
    expect(lru.size).toBe(0);
    expect(lru.dropped).toBe(0);
    expect(lru.deleteOldestWhile(() => true)).toBe(0);
  });
});
