// LruMap's contract for unsigned 64-bit keys (block hashes), with its entries in typed arrays: a U64SlotMap finds a
// key's entry slot, and the slots form a doubly linked list from the least to the most recently used. A stream's
// every block costs several lookups in these maps (its engine hash re-keyed, forgotten, removed); a Map with BigInt
// keys hashed the key's digits on each and kept a heap entry per key (a ninth of the ZMQ path's CPU went there).
import { KvsentinelError } from '../errors.js';
import { U64Halves } from '../tables/u64-hash-set.js';
import { U64SlotMap } from '../tables/u64-slot-map.js';

const NONE = -1;
const MIN_SLOTS = 16;

export class U64LruMap<V> {
  readonly #index = new U64SlotMap();
  readonly #cap: number;
  #dropped = 0;
  #hi: Uint32Array = new Uint32Array(MIN_SLOTS);
  #lo: Uint32Array = new Uint32Array(MIN_SLOTS);
  #prev: Int32Array = new Int32Array(MIN_SLOTS);
  #next: Int32Array = new Int32Array(MIN_SLOTS);
  readonly #values: (V | undefined)[] = [];
  /** least recently used, most recently used */
  #head = NONE;
  #tail = NONE;
  /** slots freed by deletes (reused first), and the first never-used slot */
  readonly #free: number[] = [];
  #unused = 0;
  readonly #key = new U64Halves();

  constructor(cap: number) {
    if (!Number.isInteger(cap) || cap < 1 || cap > 0x7fff_ffff)
      throw new KvsentinelError('internal', `U64LruMap cap must be a positive int32, got ${cap}`);
    this.#cap = cap;
  }

  get size(): number {
    return this.#index.size;
  }

  get cap(): number {
    return this.#cap;
  }

  /** entries evicted because the map was full */
  get dropped(): number {
    return this.#dropped;
  }

  /** Returns the value and marks it most recently used. */
  get(key: bigint): V | undefined {
    const slot = this.#slotOf(key);
    if (slot === NONE) return undefined;
    this.#unlink(slot);
    this.#append(slot);
    return this.#values[slot];
  }

  /** Returns the value without touching its recency. */
  peek(key: bigint): V | undefined {
    const slot = this.#slotOf(key);
    return slot === NONE ? undefined : this.#values[slot];
  }

  has(key: bigint): boolean {
    return this.#slotOf(key) !== NONE;
  }

  /** Inserts or replaces (as most recently used); returns the evicted entry, if one had to go. */
  set(key: bigint, value: V): [bigint, V] | undefined {
    const present = this.#slotOf(key);
    if (present !== NONE) {
      this.#values[present] = value;
      this.#unlink(present);
      this.#append(present);
      return undefined;
    }
    let evicted: [bigint, V] | undefined;
    if (this.#index.size >= this.#cap) {
      const oldest = this.#head;
      evicted = [this.#keyAt(oldest), this.#values[oldest]!];
      this.#remove(oldest);
      this.#dropped++;
    }
    // the halves #slotOf split are still in #key: the eviction splits none
    const slot = this.#takeSlot();
    this.#hi[slot] = this.#key.hi;
    this.#lo[slot] = this.#key.lo;
    this.#values[slot] = value;
    this.#append(slot);
    this.#index.set(this.#hi[slot], this.#lo[slot], slot);
    return evicted;
  }

  delete(key: bigint): boolean {
    const slot = this.#slotOf(key);
    if (slot === NONE) return false;
    this.#remove(slot);
    return true;
  }

  /** Oldest entry first (least recently used). */
  oldest(): [bigint, V] | undefined {
    return this.#head === NONE ? undefined : [this.#keyAt(this.#head), this.#values[this.#head]!];
  }

  *values(): IterableIterator<V> {
    for (let s = this.#head; s !== NONE; s = this.#next[s]!) yield this.#values[s]!;
  }

  /** Entries, oldest first. Do not add or delete while iterating. */
  *entries(): IterableIterator<[bigint, V]> {
    for (let s = this.#head; s !== NONE; s = this.#next[s]!) yield [this.#keyAt(s), this.#values[s]!];
  }

  #slotOf(key: bigint): number {
    this.#key.split(key);
    return this.#index.get(this.#key.hi, this.#key.lo);
  }

  #keyAt(slot: number): bigint {
    return (BigInt(this.#hi[slot]!) << 32n) | BigInt(this.#lo[slot]!);
  }

  #remove(slot: number): void {
    this.#index.delete(this.#hi[slot]!, this.#lo[slot]!);
    this.#unlink(slot);
    this.#values[slot] = undefined; // the value is garbage now
    this.#free.push(slot);
  }

  #takeSlot(): number {
    const reused = this.#free.pop();
    if (reused !== undefined) return reused;
    if (this.#unused === this.#hi.length) this.#grow();
    return this.#unused++;
  }

  #grow(): void {
    const size = Math.min(this.#hi.length * 2, this.#cap);
    const grown = (a: Uint32Array): Uint32Array => {
      const b = new Uint32Array(size);
      b.set(a);
      return b;
    };
    const grownLinks = (a: Int32Array): Int32Array => {
      const b = new Int32Array(size);
      b.set(a);
      return b;
    };
    this.#hi = grown(this.#hi);
    this.#lo = grown(this.#lo);
    this.#prev = grownLinks(this.#prev);
    this.#next = grownLinks(this.#next);
  }

  #unlink(slot: number): void {
    const p = this.#prev[slot]!;
    const n = this.#next[slot]!;
    if (p === NONE) this.#head = n;
    else this.#next[p] = n;
    if (n === NONE) this.#tail = p;
    else this.#prev[n] = p;
  }

  #append(slot: number): void {
    this.#prev[slot] = this.#tail;
    this.#next[slot] = NONE;
    if (this.#tail === NONE) this.#head = slot;
    else this.#next[this.#tail] = slot;
    this.#tail = slot;
  }
}
