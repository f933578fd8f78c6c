import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KvsentinelError } from '../errors.js';
import { HalvesViews, U64_HI_OFFSET, U64_LO_OFFSET, U64HashSet, u64HalvesView } from './u64-hash-set.js';

const U64_MAX = 0xffff_ffff_ffff_ffffn;

type Op =
  | { readonly op: 'add'; readonly key: bigint; readonly payload: number }
  | { readonly op: 'delete'; readonly key: bigint }
  | { readonly op: 'has'; readonly key: bigint }
  | { readonly op: 'setPayload'; readonly key: bigint; readonly payload: number };

// A small pool makes hits, re-adds and deletions of present keys frequent; edge keys and keys sharing one half
// exercise the (hi, lo) split and the key-0 side flag.
const keyArb = fc.oneof(
  fc.constantFrom(0n, 1n, U64_MAX, 1n << 32n, 0xffff_ffffn, 1n << 63n, 6875034662206558884n),
  fc.bigInt({ min: 0n, max: 60n }),
  fc.bigInt({ min: 0n, max: 60n }).map((n) => n << 32n),
  fc.bigInt({ min: 0n, max: U64_MAX }),
);
const payloadArb = fc.integer({ min: 0, max: 255 });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant('add' as const), key: keyArb, payload: payloadArb }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('delete' as const), key: keyArb }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('has' as const), key: keyArb }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('setPayload' as const), key: keyArb, payload: payloadArb }) },
);

// a plain check: expect() per step of thousands of steps would dominate the test's time
function same<T>(actual: T, expected: T, step: Op): void {
  if (actual !== expected)
    throw new Error(`after ${step.op} ${step.key.toString()}: got ${String(actual)}, expected ${String(expected)}`);
}

function split(key: bigint): [number, number] {
  return [Number(key >> 32n), Number(key & 0xffff_ffffn)];
}

describe('U64HashSet', () => {
  it('behaves like Map<bigint, payload> under random add/delete/has/setPayload sequences', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 600, size: 'max' }), fc.boolean(), (ops, useHalves) => {
        const set = new U64HashSet();
        const model = new Map<bigint, number>();
        for (const step of ops) {
          const [hi, lo] = split(step.key);
          switch (step.op) {
            case 'add': {
              const added = useHalves ? set.addHalves(hi, lo, step.payload) : set.add(step.key, step.payload);
              same(added, !model.has(step.key), step);
              model.set(step.key, step.payload);
              break;
            }
            case 'delete': {
              const deleted = useHalves ? set.deleteHalves(hi, lo) : set.delete(step.key);
              same(deleted, model.delete(step.key), step);
              break;
            }
            case 'has':
              same(useHalves ? set.hasHalves(hi, lo) : set.has(step.key), model.has(step.key), step);
              break;
            case 'setPayload': {
              const present = model.has(step.key);
              same(set.setPayload(step.key, step.payload), present, step);
              if (present) model.set(step.key, step.payload);
              break;
            }
          }
          same(set.size, model.size, step);
        }
        // every model key is found with its payload, and iteration yields exactly the model's keys
        for (const [key, payload] of model) {
          expect(set.payloadOf(key)).toBe(payload);
        }
        expect([...set].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))).toEqual(
          [...model.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
        );
        const visited = new Map<bigint, number>();
        set.forEachHalves((hi, lo, payload) => visited.set((BigInt(hi) << 32n) | BigInt(lo), payload));
        expect(visited).toEqual(model);
      }),
      { numRuns: 150 },
    );
  });

  it('keeps every key findable across many resizes and heavy deletion', () => {
    const set = new U64HashSet();
    const model = new Set<bigint>();
    let x = 0x1234_5678_9abc_def0n;
    const capacities = new Set<number>();
    for (let i = 0; i < 60_000; i++) {
      // a 64-bit LCG: well spread keys plus a structured family (small ints) that stresses the slot hash
      x = (x * 6364136223846793005n + 1442695040888963407n) & U64_MAX;
      const key = i % 3 === 0 ? BigInt(i) : x;
      set.add(key);
      model.add(key);
      capacities.add(set.capacity);
    }
    expect(capacities.size).toBeGreaterThanOrEqual(12); // 16 → 131072 doublings
    expect(set.size).toBe(model.size);
    let n = 0;
    let failedDeletes = 0;
    for (const key of model) {
      if (n++ % 2 === 0) {
        if (!set.delete(key)) failedDeletes++;
        model.delete(key);
      }
    }
    expect(failedDeletes).toBe(0);
    expect(set.size).toBe(model.size);
    let missing = 0;
    for (const key of model) if (!set.has(key)) missing++;
    expect(missing).toBe(0);
    expect(set.has(x ^ 1n) && !model.has(x ^ 1n)).toBe(false);
    expect(set.byteLength).toBe(set.capacity * 9);
  });

  it('stores key 0 (hash of the empty block) beside the slots', () => {
    const set = new U64HashSet();
    expect(set.has(0n)).toBe(false);
    expect(set.payloadOf(0n)).toBe(-1);
    expect(set.add(0n, 7)).toBe(true);
    expect(set.add(0n, 9)).toBe(false);
    expect(set.size).toBe(1);
    expect(set.payloadOf(0n)).toBe(9);
    expect([...set]).toEqual([0n]);
    expect(set.delete(0n)).toBe(true);
    expect(set.delete(0n)).toBe(false);
    expect(set.size).toBe(0);
  });

  it('evictOne() removes a present key at a time with its payload, spreads over the keys, and says -1 when empty', () => {
    fc.assert(
      fc.property(fc.uniqueArray(keyArb, { minLength: 1, maxLength: 300 }), fc.nat(400), (keys, evictions) => {
        const set = new U64HashSet();
        const payload = new Map(keys.map((k, i) => [k, i % 256]));
        for (const k of keys) set.add(k, payload.get(k));
        const left = new Map(payload);
        for (let n = 0; n < evictions; n++) {
          const before = [...left.keys()];
          const p = set.evictOne();
          if (before.length === 0) {
            expect(p).toBe(-1);
            continue;
          }
          const gone = before.filter((k) => !set.has(k));
          expect(gone).toHaveLength(1);
          expect(p).toBe(left.get(gone[0]!));
          left.delete(gone[0]!);
          expect(set.size).toBe(left.size);
        }
        for (const [k, v] of left) expect(set.payloadOf(k)).toBe(v);
      }),
      { numRuns: 100 },
    );
    // spared keys go last: only when every key is spared is one of them taken
    const small = new U64HashSet();
    for (const k of [0n, 5n, 1n << 40n, U64_MAX]) small.add(k, 7);
    const keep = new Set([0n, 5n, U64_MAX]);
    const spare = (hi: number, lo: number): boolean => keep.has((BigInt(hi) << 32n) | BigInt(lo));
    expect(small.evictOne(spare)).toBe(7);
    expect(small.has(1n << 40n)).toBe(false);
    expect(small.evictOne(spare)).toBe(7);
    expect(small.size).toBe(2);
    // rotating, not always the same region: the first half of the evictions leaves keys from all over the range
    const set = new U64HashSet();
    for (let i = 1n; i <= 4096n; i++) set.add((i * 0x9e3779b97f4a7c15n) & U64_MAX, 0);
    for (let n = 0; n < 2048; n++) set.evictOne();
    const survivors = [...set].map((k) => Number(k >> 60n));
    expect(new Set(survivors).size).toBe(16);
  });

  it('clear() empties the set and shrinks it back', () => {
    const set = new U64HashSet();
    for (let i = 0n; i < 1000n; i++) set.add(i);
    expect(set.capacity).toBeGreaterThan(1000);
    set.clear();
    expect(set.size).toBe(0);
    expect(set.has(0n)).toBe(false);
    expect(set.has(5n)).toBe(false);
    expect(set.capacity).toBe(16);
  });

  it('presizes for an expected size', () => {
    const set = new U64HashSet(1000);
    const capacity = set.capacity;
    for (let i = 1n; i <= 1000n; i++) set.add(i);
    expect(set.capacity).toBe(capacity);
  });

  it.each([
    ['negative', -1n],
    ['2^64', 1n << 64n],
  ])('rejects a %s key', (_name, key) => {
    const set = new U64HashSet();
    expect(() => set.add(key)).toThrow(/u64 key out of range/);
    expect(() => set.has(key)).toThrow(KvsentinelError);
  });

  it.each([[-1], [256], [1.5]])('rejects payload %s', (payload) => {
    expect(() => new U64HashSet().add(1n, payload)).toThrow(/payload must be an integer in 0\.\.255/);
  });

  it('reads BigUint64Array keys as halves without BigInt', () => {
    const keys = BigUint64Array.of(1n, U64_MAX, (5n << 32n) | 9n);
    const view = u64HalvesView(keys.subarray(1));
    expect(view[U64_HI_OFFSET]).toBe(0xffff_ffff);
    expect(view[U64_LO_OFFSET]).toBe(0xffff_ffff);
    expect(view[2 + U64_HI_OFFSET]).toBe(5);
    expect(view[2 + U64_LO_OFFSET]).toBe(9);
  });

  it('addKeys / deleteKeys agree with add / delete key by key, u64 extremes included', () => {
    const key = fc.oneof(
      fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
      fc.constantFrom(0n, 2n ** 32n - 1n, 2n ** 32n, 2n ** 64n - 1n),
      fc.bigInt({ min: 0n, max: 7n }),
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.boolean(), fc.array(key, { maxLength: 6 })), { maxLength: 30 }), (ops) => {
        const bulk = new U64HashSet();
        const single = new U64HashSet();
        for (const [add, keys] of ops) {
          const arr = BigUint64Array.from(keys);
          let expected = 0;
          for (const k of keys) if (add ? single.add(k) : single.delete(k)) expected++;
          expect(add ? bulk.addKeys(arr) : bulk.deleteKeys(arr)).toBe(expected);
        }
        expect(bulk.size).toBe(single.size);
        for (const [, keys] of ops) for (const k of keys) expect(bulk.has(k)).toBe(single.has(k));
      }),
      { numRuns: 150 },
    );
  });

  it('HalvesViews reuses a view of the same array (the last two) and stays current with its contents', () => {
    const views = new HalvesViews();
    const a = BigUint64Array.of(1n);
    const b = BigUint64Array.of(2n, 3n);
    const va = views.of(a);
    expect(views.of(b)).not.toBe(va);
    expect(views.of(a)).toBe(va);
    a[0] = 2n ** 32n + 7n;
    expect([va[U64_HI_OFFSET], va[U64_LO_OFFSET]]).toEqual([1, 7]);
    expect(views.of(BigUint64Array.of(1n))).not.toBe(va);
    // another owner's views are its own
    expect(new HalvesViews().of(a)).not.toBe(va);
    expect(Array.from(u64HalvesView(a))).toEqual(Array.from(va));
  });
});
