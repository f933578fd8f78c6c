// A Map with a size cap that evicts the least recently used entry and counts what it dropped, so every per-key
// memory the state holds (trajectories, pending decisions) is bounded and its losses are visible.

export class LruMap<K, V> {
  readonly #map = new Map<K, V>();
  readonly #cap: number;
  #dropped = 0;

  constructor(cap: number) {
    if (!Number.isInteger(cap) || cap < 1) throw new RangeError(`LruMap cap must be a positive integer, got ${cap}`);
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
    if (this.#map.has(key)) this.#map.delete(key);
    this.#map.set(key, value);
    if (this.#map.size <= this.#cap) return undefined;
    const oldest = this.#map.entries().next().value as [K, V];
    this.#map.delete(oldest[0]);
    this.#dropped++;
    return oldest;
  }

  delete(key: K): boolean {
    return this.#map.delete(key);
  }

  /** Oldest entry first (least recently used). */
  oldest(): [K, V] | undefined {
    const first = this.#map.entries().next();
    return first.done === true ? undefined : first.value;
  }

  values(): IterableIterator<V> {
    return this.#map.values();
  }

  /** Entries, oldest first. Do not add while iterating. */
  entries(): IterableIterator<[K, V]> {
    return this.#map.entries();
  }
}
