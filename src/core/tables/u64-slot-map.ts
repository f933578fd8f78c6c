// Unsigned 64-bit keys (as halves) to small non-negative integers: the index of structures that keep their entries
// in typed arrays by slot number (U64LruMap). Open addressing with linear probing over one interleaved Uint32Array
// ([hi, lo] per slot) and one Int32Array of values, -1 marking an empty slot, so key 0 needs no side flag. Deletion
// shifts the rest of the cluster back: no tombstones, probe lengths stay short under churn. A Map with BigInt keys
// hashes the key's digits on every call and its entries are heap objects; here a lookup touches two flat arrays.
import { KvsentinelError } from '../errors.js';
import { slotHash } from './u64-hash-set.js';

const MIN_CAPACITY = 16;

export class U64SlotMap {
  #keys: Uint32Array; // [hi, lo] per slot
  #values: Int32Array; // -1: empty
  #mask: number;
  #size = 0;

  constructor() {
    this.#keys = new Uint32Array(MIN_CAPACITY * 2);
    this.#values = new Int32Array(MIN_CAPACITY).fill(-1);
    this.#mask = MIN_CAPACITY - 1;
  }

  get size(): number {
    return this.#size;
  }

  /** The key's value, or -1 when it is absent. */
  get(hi: number, lo: number): number {
    const i = this.#find(hi >>> 0, lo >>> 0);
    return i < 0 ? -1 : this.#values[i]!;
  }

  /** Sets the key's value (a non-negative int32). */
  set(hi: number, lo: number, value: number): void {
    this.put(hi, lo, value);
  }

  /** Sets the key's value (a non-negative int32) and returns the one it replaced, or -1: one probe for both. */
  put(hi: number, lo: number, value: number): number {
    if (!Number.isInteger(value) || value < 0 || value > 0x7fff_ffff)
      throw new KvsentinelError('internal', `U64SlotMap value must be a non-negative int32, got ${String(value)}`);
    hi >>>= 0;
    lo >>>= 0;
    // at most 3/4 full
    if (4 * (this.#size + 1) > 3 * (this.#mask + 1)) this.#resize((this.#mask + 1) * 2);
    const found = this.#find(hi, lo);
    if (found >= 0) {
      const previous = this.#values[found]!;
      this.#values[found] = value;
      return previous;
    }
    const i = ~found;
    this.#keys[2 * i] = hi;
    this.#keys[2 * i + 1] = lo;
    this.#values[i] = value;
    this.#size++;
    return -1;
  }

  /** Removes the key; its value, or -1 when it was absent. */
  delete(hi: number, lo: number): number {
    let hole = this.#find(hi >>> 0, lo >>> 0);
    if (hole < 0) return -1;
    const keys = this.#keys;
    const values = this.#values;
    const removed = values[hole]!;
    const mask = this.#mask;
    // later members of the cluster move into the hole unless their home slot lies cyclically in (hole, j]
    for (let j = (hole + 1) & mask; values[j]! >= 0; j = (j + 1) & mask) {
      const home = slotHash(keys[2 * j]!, keys[2 * j + 1]!) & mask;
      if (((j - home) & mask) < ((j - hole) & mask)) continue;
      keys[2 * hole] = keys[2 * j]!;
      keys[2 * hole + 1] = keys[2 * j + 1]!;
      values[hole] = values[j]!;
      hole = j;
    }
    values[hole] = -1;
    this.#size--;
    return removed;
  }

  /** Slot of the key when present; else ~(the empty slot where it would go). */
  #find(hi: number, lo: number): number {
    const keys = this.#keys;
    const values = this.#values;
    const mask = this.#mask;
    for (let i = slotHash(hi, lo) & mask; ; i = (i + 1) & mask) {
      if (values[i]! < 0) return ~i;
      if (keys[2 * i] === hi && keys[2 * i + 1] === lo) return i;
    }
  }

  #resize(capacity: number): void {
    const oldKeys = this.#keys;
    const oldValues = this.#values;
    this.#keys = new Uint32Array(capacity * 2);
    this.#values = new Int32Array(capacity).fill(-1);
    this.#mask = capacity - 1;
    for (let s = 0; s < oldValues.length; s++) {
      if (oldValues[s]! < 0) continue;
      const i = ~this.#find(oldKeys[2 * s]!, oldKeys[2 * s + 1]!);
      this.#keys[2 * i] = oldKeys[2 * s]!;
      this.#keys[2 * i + 1] = oldKeys[2 * s + 1]!;
      this.#values[i] = oldValues[s]!;
    }
  }
}
