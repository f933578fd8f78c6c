import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KvsentinelError } from '../errors.js';
import { ForgottenKeys } from './forgotten-keys.js';

/** The documented ring, the slow way: cap slots written in turn, a hash held at most once. */
class ModelRing {
  readonly slots: ({ hash: bigint; chain: Uint8Array | null; tableKey: bigint } | null)[];
  next = 0;
  constructor(cap: number) {
    this.slots = Array.from({ length: cap }, () => null);
  }
  remember(hash: bigint, chain: Uint8Array | null, tableKey: bigint): void {
    const held = this.slots.findIndex((s) => s?.hash === hash);
    if (held >= 0) this.slots[held] = null;
    this.slots[this.next] = { hash, chain: chain === null ? null : chain.slice(), tableKey };
    this.next = (this.next + 1) % this.slots.length;
  }
  take(hash: bigint): { chain: Uint8Array | null; tableKey: bigint } | undefined {
    const held = this.slots.findIndex((s) => s?.hash === hash);
    if (held < 0) return undefined;
    const s = this.slots[held]!;
    this.slots[held] = null;
    return { chain: s.chain, tableKey: s.tableKey };
  }
  get size(): number {
    return this.slots.filter((s) => s !== null).length;
  }
}

const hashOf = (pool: number): fc.Arbitrary<bigint> =>
  fc.oneof(
    fc.constantFrom(0n, 2n ** 64n - 1n, 1n << 32n),
    fc.integer({ min: 0, max: pool }).map((n) => BigInt.asUintN(64, BigInt(n + 1) * 0x9e3779b97f4a7c15n)),
  );
const opOf = (hash: fc.Arbitrary<bigint>) =>
  fc.oneof(
    fc.record({
      take: fc.constant(false),
      hash,
      chain: fc.option(fc.uint8Array({ minLength: 32, maxLength: 32 })),
      tableKey: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
    }),
    fc.record({ take: fc.constant(true), hash }),
  );
// a pool of hashes small next to the cap (hashes come back while their old slots are live) or large (wrap-around)
const run = fc.integer({ min: 2, max: 90 }).chain((pool) => fc.array(opOf(hashOf(pool)), { maxLength: 600 }));

describe('ForgottenKeys', () => {
  it('is the documented ring under any mix of remembers and takes, across growth and wrap-around', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 150 }), run, (cap, list) => {
        const keys = new ForgottenKeys(cap);
        const model = new ModelRing(cap);
        for (const o of list) {
          if (o.take) expect(keys.take(o.hash)).toEqual(model.take(o.hash));
          else {
            keys.remember(o.hash, o.chain, o.tableKey);
            model.remember(o.hash, o.chain, o.tableKey);
          }
          expect(keys.size).toBe(model.size);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('a hash taken back and remembered again survives its old slot coming round', () => {
    const keys = new ForgottenKeys(2);
    keys.remember(5n, null, 1n);
    keys.take(5n);
    keys.remember(5n, null, 2n); // slot 1
    keys.remember(6n, null, 3n); // slot 0 again: 5's first slot, emptied by the take
    expect(keys.size).toBe(2);
    expect(keys.take(5n)).toEqual({ chain: null, tableKey: 2n });
  });

  it('gives back a copy of the chain, not a view that a later remember overwrites', () => {
    const keys = new ForgottenKeys(2);
    const chain = new Uint8Array(32).fill(7);
    keys.remember(1n, chain, 11n);
    chain.fill(0);
    const back = keys.take(1n)!;
    keys.remember(2n, new Uint8Array(32).fill(9), 12n);
    keys.remember(3n, new Uint8Array(32).fill(9), 13n);
    expect(back.chain).toEqual(new Uint8Array(32).fill(7));
    expect(back.tableKey).toBe(11n);
    expect(keys.take(1n)).toBeUndefined();
  });

  it('rejects a chain that is not 32 bytes and a cap that is not a positive int32', () => {
    expect(() => new ForgottenKeys(4).remember(1n, new Uint8Array(31), 1n)).toThrow(KvsentinelError);
    expect(() => new ForgottenKeys(0)).toThrow(KvsentinelError);
    expect(() => new ForgottenKeys(4).take(-1n)).toThrow(/u64 key out of range/);
  });
});
