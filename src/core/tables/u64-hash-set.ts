// A compact set of unsigned 64-bit keys for block tables with millions of entries.
// Open addressing with linear probing over one interleaved Uint32Array ([hi, lo] per slot) plus one payload byte
// per slot (cache level or flags). Deletion shifts the following cluster back, so there are no tombstones and probe
// lengths never degrade under churn. The all-zero slot means "empty"; key 0 (hash([]) == 0) lives in a side flag.
// At the maximum load factor (3/4) a slot costs 9 bytes: 12–24 bytes per stored key depending on where in the
// doubling cycle the size sits.
import { KvsentinelError } from '../errors.js';

const MIN_CAPACITY = 16;
const MAX_LOAD_NUM = 3;
const MAX_LOAD_DEN = 4;
const U64_MAX = 0xffff_ffff_ffff_ffffn;

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
/** Offset of the high half of key i in `u64HalvesView(keys)`: `view[2 * i + U64_HI_OFFSET]`. */
export const U64_HI_OFFSET = LITTLE_ENDIAN ? 1 : 0;
/** Offset of the low half of key i in `u64HalvesView(keys)`: `view[2 * i + U64_LO_OFFSET]`. */
export const U64_LO_OFFSET = LITTLE_ENDIAN ? 0 : 1;

/**
 * Uint32Array views over the same memory as key arrays, for reading keys as halves without allocating BigInts; the
 * last two made are kept: a per-decision join reads the same one or two key arrays against every server, and a
 * typed-array view costs more to create than the lookups it serves. A view shares its array's memory, and a typed
 * array's buffer and offset never change, so a kept view of the same array is current while the length agrees (a
 * detached buffer reads as length 0). Each table keeps its own.
 */
export class HalvesViews {
  #keysA: BigUint64Array | null = null;
  #viewA: Uint32Array | null = null;
  #keysB: BigUint64Array | null = null;
  #viewB: Uint32Array | null = null;

  of(keys: BigUint64Array): Uint32Array {
    if (keys === this.#keysA && this.#viewA !== null && this.#viewA.length === keys.length * 2) return this.#viewA;
    if (keys === this.#keysB && this.#viewB !== null && this.#viewB.length === keys.length * 2) return this.#viewB;
    const view = u64HalvesView(keys);
    this.#keysB = this.#keysA;
    this.#viewB = this.#viewA;
    this.#keysA = keys;
    this.#viewA = view;
    return view;
  }
}

/** A Uint32Array view over the same memory as `keys` (a new one each call; HalvesViews keeps the last two). */
export function u64HalvesView(keys: BigUint64Array): Uint32Array {
  return new Uint32Array(keys.buffer, keys.byteOffset, keys.length * 2);
}

function checkKey(key: bigint): void {
  if (key < 0n || key > U64_MAX) throw new KvsentinelError('internal', `u64 key out of range: ${key.toString()}`);
}

/** A u64 key's halves, split through one scratch cell: no BigInt arithmetic, nothing allocated per key. */
export class U64Halves {
  readonly #cell = new BigUint64Array(1);
  readonly #halves = new Uint32Array(this.#cell.buffer);
  hi = 0;
  lo = 0;

  /** Splits `key` into hi and lo; a key outside u64 is an internal error (the decoders hand only u64s on). */
  split(key: bigint): void {
    checkKey(key);
    this.#cell[0] = key;
    this.hi = this.#halves[U64_HI_OFFSET]!;
    this.lo = this.#halves[U64_LO_OFFSET]!;
  }
}

/** splits the bigint keys of the set's calls: BigInt shifts allocate, 55 ns a key where this takes 5 */
const KEY = new U64Halves();

/** [hi, lo] of a u64 key, through the same scratch cell (for callers that keep halves of their own) */
export function splitU64Key(key: bigint): [number, number] {
  KEY.split(key);
  return [KEY.hi, KEY.lo];
}

function checkPayload(payload: number): void {
  if (!Number.isInteger(payload) || payload < 0 || payload > 255) {
    throw new KvsentinelError('internal', `payload must be an integer in 0..255, got ${String(payload)}`);
  }
}

/** The slot hash of a key's halves (murmur3's 32-bit finalizer), shared by the flat u64 tables. */
export function slotHash(hi: number, lo: number): number {
  // murmur3 fmix32 over a multiplicative combination of the halves
  let h = (Math.imul(hi, 0x9e3779b1) ^ lo) >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

function capacityFor(expectedSize: number): number {
  let capacity = MIN_CAPACITY;
  while (capacity * MAX_LOAD_NUM < expectedSize * MAX_LOAD_DEN) capacity *= 2;
  return capacity;
}

export class U64HashSet {
  #slots: Uint32Array; // [hi, lo] per slot
  #payloads: Uint8Array;
  #mask: number;
  #growAt: number;
  #size = 0; // keys in slots (key 0 excluded)
  #hasZero = false;
  #zeroPayload = 0;
  #evictFrom = 0; // where evictOne looks next
  readonly #initialCapacity: number;
  // one key split into halves by addKeys/deleteKeys (made on first use: most sets never need it)
  #splitCell: BigUint64Array | null = null;
  #splitHalves: Uint32Array | null = null;

  /** @param expectedSize keys to hold without growing (default: a small table that doubles as needed) */
  constructor(expectedSize = 0) {
    if (!Number.isSafeInteger(expectedSize) || expectedSize < 0) {
      throw new KvsentinelError('internal', `expectedSize must be a non-negative integer, got ${String(expectedSize)}`);
    }
    this.#initialCapacity = capacityFor(expectedSize);
    this.#slots = new Uint32Array(this.#initialCapacity * 2);
    this.#payloads = new Uint8Array(this.#initialCapacity);
    this.#mask = this.#initialCapacity - 1;
    this.#growAt = (this.#initialCapacity * MAX_LOAD_NUM) / MAX_LOAD_DEN;
  }

  get size(): number {
    return this.#size + (this.#hasZero ? 1 : 0);
  }

  /** Number of slots (a power of two). */
  get capacity(): number {
    return this.#mask + 1;
  }

  /** Bytes held by the backing typed arrays. */
  get byteLength(): number {
    return this.#slots.byteLength + this.#payloads.byteLength;
  }

  /**
   * Slot index of the key when present; else ~index (negative) of the empty slot that ends its cluster, where the
   * key would go. The caller handles key 0.
   */
  #probe(hi: number, lo: number): number {
    const slots = this.#slots;
    const mask = this.#mask;
    let i = slotHash(hi, lo) & mask;
    for (;;) {
      const sHi = slots[2 * i]!;
      const sLo = slots[2 * i + 1]!;
      if (sHi === hi && sLo === lo) return i;
      if (sHi === 0 && sLo === 0) return ~i;
      i = (i + 1) & mask;
    }
  }

  hasHalves(hi: number, lo: number): boolean {
    hi >>>= 0;
    lo >>>= 0;
    if (hi === 0 && lo === 0) return this.#hasZero;
    return this.#probe(hi, lo) >= 0;
  }

  /** The key's payload byte, or -1 when the key is absent. */
  payloadHalves(hi: number, lo: number): number {
    hi >>>= 0;
    lo >>>= 0;
    if (hi === 0 && lo === 0) return this.#hasZero ? this.#zeroPayload : -1;
    const i = this.#probe(hi, lo);
    return i < 0 ? -1 : this.#payloads[i]!;
  }

  /** Sets the payload of a present key; false when the key is absent. */
  setPayloadHalves(hi: number, lo: number, payload: number): boolean {
    checkPayload(payload);
    hi >>>= 0;
    lo >>>= 0;
    if (hi === 0 && lo === 0) {
      if (!this.#hasZero) return false;
      this.#zeroPayload = payload;
      return true;
    }
    const i = this.#probe(hi, lo);
    if (i < 0) return false;
    this.#payloads[i] = payload;
    return true;
  }

  /** Adds the key (or overwrites its payload). True when the key was not present before. */
  addHalves(hi: number, lo: number, payload = 0): boolean {
    checkPayload(payload);
    hi >>>= 0;
    lo >>>= 0;
    if (hi === 0 && lo === 0) {
      const added = !this.#hasZero;
      this.#hasZero = true;
      this.#zeroPayload = payload;
      return added;
    }
    if (this.#size >= this.#growAt) this.#resize((this.#mask + 1) * 2);
    const found = this.#probe(hi, lo);
    if (found >= 0) {
      this.#payloads[found] = payload;
      return false;
    }
    const i = ~found;
    const slots = this.#slots;
    slots[2 * i] = hi;
    slots[2 * i + 1] = lo;
    this.#payloads[i] = payload;
    this.#size++;
    return true;
  }

  /** Removes the key; true when it was present. */
  deleteHalves(hi: number, lo: number): boolean {
    hi >>>= 0;
    lo >>>= 0;
    if (hi === 0 && lo === 0) {
      const had = this.#hasZero;
      this.#hasZero = false;
      this.#zeroPayload = 0;
      return had;
    }
    let hole = this.#probe(hi, lo);
    if (hole < 0) return false;
    // backward-shift deletion: pull later members of the cluster into the hole when their home allows it
    const slots = this.#slots;
    const payloads = this.#payloads;
    const mask = this.#mask;
    let j = hole;
    for (;;) {
      j = (j + 1) & mask;
      const jHi = slots[2 * j]!;
      const jLo = slots[2 * j + 1]!;
      if (jHi === 0 && jLo === 0) break;
      const home = slotHash(jHi, jLo) & mask;
      // j may move to hole unless its home lies cyclically in (hole, j]
      const homeInRange = hole <= j ? home > hole && home <= j : home > hole || home <= j;
      if (homeInRange) continue;
      slots[2 * hole] = jHi;
      slots[2 * hole + 1] = jLo;
      payloads[hole] = payloads[j]!;
      hole = j;
    }
    slots[2 * hole] = 0;
    slots[2 * hole + 1] = 0;
    payloads[hole] = 0;
    this.#size--;
    return true;
  }

  /**
   * Removes one key chosen by the set, not by the caller: the next occupied slot after the previous eviction, so
   * over many calls every key is equally likely to go (slots are ordered by hash, not by age). Keys for which
   * `spare(hi, lo)` is true are passed over unless every key is spared. Returns the evicted key's payload, or -1
   * when the set is empty. For caps on tables that keep no age per key. `evicted` hears which key went.
   */
  evictOne(spare?: (hi: number, lo: number) => boolean, evicted?: (hi: number, lo: number) => void): number {
    if (this.#size === 0 || (this.#hasZero && !(spare?.(0, 0) ?? false))) {
      if (!this.#hasZero) return -1;
      const payload = this.#zeroPayload;
      this.#hasZero = false;
      this.#zeroPayload = 0;
      evicted?.(0, 0);
      return payload;
    }
    const slots = this.#slots;
    const mask = this.#mask;
    let first = -1;
    let found = -1;
    for (let seen = 0, i = this.#evictFrom & mask; seen <= mask && found < 0; seen++, i = (i + 1) & mask) {
      if (slots[2 * i] === 0 && slots[2 * i + 1] === 0) continue;
      if (first < 0) first = i;
      if (spare === undefined || !spare(slots[2 * i]!, slots[2 * i + 1]!)) found = i;
    }
    const i = found >= 0 ? found : first;
    const payload = this.#payloads[i]!;
    const hi = slots[2 * i]!;
    const lo = slots[2 * i + 1]!;
    this.deleteHalves(hi, lo);
    evicted?.(hi, lo);
    this.#evictFrom = (i + 1) & mask;
    return payload;
  }

  /**
   * Adds every key of `keys` (payload 0); returns how many were new. Splits each key through a scratch cell: for the
   * short arrays of single events that is cheaper than a halves view, which would externalise the array's buffer.
   */
  addKeys(keys: BigUint64Array): number {
    return this.#eachKey(keys, false);
  }

  /** Deletes every key of `keys`; returns how many were present. */
  deleteKeys(keys: BigUint64Array): number {
    return this.#eachKey(keys, true);
  }

  /** Adds (or deletes) each key; counts the keys that changed the set. */
  #eachKey(keys: BigUint64Array, del: boolean): number {
    let changed = 0;
    const cell = (this.#splitCell ??= new BigUint64Array(1));
    const halves = (this.#splitHalves ??= new Uint32Array(cell.buffer));
    for (let i = 0; i < keys.length; i++) {
      cell[0] = keys[i]!;
      const hi = halves[U64_HI_OFFSET]!;
      const lo = halves[U64_LO_OFFSET]!;
      if (del ? this.deleteHalves(hi, lo) : this.addHalves(hi, lo)) changed++;
    }
    return changed;
  }

  has(key: bigint): boolean {
    KEY.split(key);
    return this.hasHalves(KEY.hi, KEY.lo);
  }

  add(key: bigint, payload = 0): boolean {
    KEY.split(key);
    return this.addHalves(KEY.hi, KEY.lo, payload);
  }

  delete(key: bigint): boolean {
    KEY.split(key);
    return this.deleteHalves(KEY.hi, KEY.lo);
  }

  /** The key's payload byte, or -1 when absent. */
  payloadOf(key: bigint): number {
    KEY.split(key);
    return this.payloadHalves(KEY.hi, KEY.lo);
  }

  setPayload(key: bigint, payload: number): boolean {
    KEY.split(key);
    return this.setPayloadHalves(KEY.hi, KEY.lo, payload);
  }

  /** Empties the set and gives the memory back (capacity returns to the constructor's). */
  clear(): void {
    this.#slots = new Uint32Array(this.#initialCapacity * 2);
    this.#payloads = new Uint8Array(this.#initialCapacity);
    this.#mask = this.#initialCapacity - 1;
    this.#growAt = (this.#initialCapacity * MAX_LOAD_NUM) / MAX_LOAD_DEN;
    this.#size = 0;
    this.#hasZero = false;
    this.#zeroPayload = 0;
  }

  /** Calls `visit(hi, lo, payload)` for every key, without allocating. Do not mutate the set inside `visit`. */
  forEachHalves(visit: (hi: number, lo: number, payload: number) => void): void {
    if (this.#hasZero) visit(0, 0, this.#zeroPayload);
    const slots = this.#slots;
    const payloads = this.#payloads;
    const capacity = this.#mask + 1;
    for (let i = 0; i < capacity; i++) {
      const hi = slots[2 * i]!;
      const lo = slots[2 * i + 1]!;
      if (hi !== 0 || lo !== 0) visit(hi, lo, payloads[i]!);
    }
  }

  /** Keys as bigints, in table order. Do not mutate the set while iterating. */
  *keys(): IterableIterator<bigint> {
    if (this.#hasZero) yield 0n;
    const slots = this.#slots;
    const capacity = this.#mask + 1;
    for (let i = 0; i < capacity; i++) {
      const hi = slots[2 * i]!;
      const lo = slots[2 * i + 1]!;
      if (hi !== 0 || lo !== 0) yield (BigInt(hi) << 32n) | BigInt(lo);
    }
  }

  [Symbol.iterator](): IterableIterator<bigint> {
    return this.keys();
  }

  #resize(capacity: number): void {
    const oldSlots = this.#slots;
    const oldPayloads = this.#payloads;
    const oldCapacity = this.#mask + 1;
    const slots = new Uint32Array(capacity * 2);
    const payloads = new Uint8Array(capacity);
    const mask = capacity - 1;
    for (let s = 0; s < oldCapacity; s++) {
      const hi = oldSlots[2 * s]!;
      const lo = oldSlots[2 * s + 1]!;
      if (hi === 0 && lo === 0) continue;
      let i = slotHash(hi, lo) & mask;
      while (slots[2 * i] !== 0 || slots[2 * i + 1] !== 0) i = (i + 1) & mask;
      slots[2 * i] = hi;
      slots[2 * i + 1] = lo;
      payloads[i] = oldPayloads[s]!;
    }
    this.#slots = slots;
    this.#payloads = payloads;
    this.#mask = mask;
    this.#growAt = (capacity * MAX_LOAD_NUM) / MAX_LOAD_DEN;
  }
}
