// A Map with a size cap that evicts the least recently used entry and counts what it dropped, so every per-key
// memory the state holds (trajectories, pending decisions) is bounded and its losses are visible.
// The oldest entry is found with one iterator kept across calls: V8's Map leaves a deleted entry's slot in place
// until its table is rehashed, so a fresh iterator per eviction walks every slot evicted before it (a full map of
// 131,072 entries spent most of a stream's time there); the kept one passes each slot once.
import { KvsentinelError } from '../errors.js';

export class LruMap<K, V> {
  readonly #map = new Map<K, V>();
  readonly #cap: number;
  #dropped = 0;
  /** walks the map in insertion order; every entry before it was deleted, but `#head` */
  #cursor: Iterator<[K, V]> | null = null;
  /** the last entry the cursor returned, while it may still be the oldest (null once touched) */
  #head: [K, V] | null = null;

  constructor(cap: number) {
    if (!Number.isInteger(cap) || cap < 1)
      throw new KvsentinelError('internal', `LruMap cap must be a positive integer, got ${cap}`);
    this.#cap = cap;
  }

  get size(): number {
    return this.#map.size;
  }

  get cap(): number {
    return this.#cap;
  }

  /** entries evicted because the map was full */
  get dropped(): number {
    return this.#dropped;
  }

  /** Returns the value and marks it most recently used. */
  get(key: K): V | undefined {
    const value = this.#map.get(key);
    if (value === undefined) return undefined;
    this.#touch(key);
    this.#map.delete(key);
    this.#map.set(key, value);
    return value;
  }

  /** Returns the value without touching its recency. */
  peek(key: K): V | undefined {
    return this.#map.get(key);
  }

  has(key: K): boolean {
    return this.#map.has(key);
  }

  /** Inserts or replaces; returns the evicted entry, if one had to go. */
  set(key: K, value: V): [K, V] | undefined {
    const size = this.#map.size;
    this.#map.set(key, value);
    if (this.#map.size === size) {
      // it was there (and stays where it was): move it to the newest end; a new key costs one lookup, not two
      this.#touch(key);
      this.#map.delete(key);
      this.#map.set(key, value);
    }
    if (this.#map.size <= this.#cap) return undefined;
    const oldest = this.oldest()!;
    this.delete(oldest[0]);
    this.#dropped++;
    return oldest;
  }

  delete(key: K): boolean {
    this.#touch(key);
    return this.#map.delete(key);
  }

  /** Oldest entry first (least recently used). */
  oldest(): [K, V] | undefined {
    if (this.#head !== null) return this.#head;
    if (this.#map.size === 0) {
      this.#cursor = null;
      return undefined;
    }
    this.#cursor ??= this.#map.entries();
    let next = this.#cursor.next();
    if (next.done === true) {
      // an exhausted iterator stays done: entries added since are found by a fresh one
      this.#cursor = this.#map.entries();
      next = this.#cursor.next();
    }
    this.#head = next.done === true ? null : next.value;
    return this.#head ?? undefined;
  }

  /**
   * Deletes the oldest entries while `stale` holds for them (use order is age order for a TTL: the stale ones lead);
   * returns how many went. Not counted as dropped: the caller counts expiry apart from the cap's evictions.
   */
  deleteOldestWhile(stale: (value: V) => boolean): number {
    let deleted = 0;
    for (let oldest = this.oldest(); oldest !== undefined && stale(oldest[1]); oldest = this.oldest()) {
      this.delete(oldest[0]);
      deleted++;
    }
    return deleted;
  }

  /** the head entry moves or goes: the cursor, already past it, finds the next oldest */
  #touch(key: K): void {
    if (this.#head !== null && this.#head[0] === key) this.#head = null;
  }

  values(): IterableIterator<V> {
    return this.#map.values();
  }

  /** Entries, oldest first. Do not add while iterating. */
  entries(): IterableIterator<[K, V]> {
    return this.#map.entries();
  }
}
