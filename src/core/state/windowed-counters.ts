// Named counters over a sliding time window, kept as a ring of time buckets: rules read rates over the last
// `windowMs` (so a finding can turn off after a fix), with memory bounded by buckets × keys. A null window keeps
// one bucket for the whole run (the one-shot audit).
import { KvsentinelError } from '../errors.js';

export interface WindowedCountersOptions {
  /** window length in ms; null = since start */
  readonly windowMs: number | null;
  /** buckets per window (resolution); default 30 */
  readonly buckets?: number;
}

/** a sum kept in a cell, so an add to a key already in the bucket is one lookup, not a get and a set */
interface Sum {
  value: number;
}

interface Bucket {
  start: number;
  readonly sums: Map<string, Sum>;
  readonly maxes: Map<string, number>;
}

export class WindowedCounters {
  readonly #windowMs: number | null;
  readonly #bucketMs: number;
  readonly #ring: Bucket[];
  #firstTs: number | null = null;
  #lastTs: number | null = null;

  constructor(options: WindowedCountersOptions) {
    const { windowMs } = options;
    if (windowMs !== null && !(windowMs > 0))
      throw new KvsentinelError('internal', `windowMs must be > 0 or null, got ${windowMs}`);
    const count = windowMs === null ? 1 : Math.max(1, Math.floor(options.buckets ?? 30));
    this.#windowMs = windowMs;
    this.#bucketMs = windowMs === null ? Number.POSITIVE_INFINITY : windowMs / count;
    this.#ring = Array.from({ length: count }, () => ({
      start: Number.NEGATIVE_INFINITY,
      sums: new Map(),
      maxes: new Map(),
    }));
  }

  get windowMs(): number | null {
    return this.#windowMs;
  }

  add(ts: number, key: string, amount = 1): void {
    const sums = this.#bucket(ts).sums;
    const sum = sums.get(key);
    if (sum === undefined) sums.set(key, { value: amount });
    else sum.value += amount;
  }

  /** Keeps the largest value seen in the bucket for `key`. */
  max(ts: number, key: string, value: number): void {
    const bucket = this.#bucket(ts);
    const previous = bucket.maxes.get(key);
    if (previous === undefined || value > previous) bucket.maxes.set(key, value);
  }

  /** Sum of `key` over the window ending at `now`. */
  sum(key: string, now: number): number {
    let total = 0;
    for (const bucket of this.#ring) if (this.#live(bucket, now)) total += bucket.sums.get(key)?.value ?? 0;
    return total;
  }

  /** Largest value recorded for `key` in the window, null if none. */
  maxOf(key: string, now: number): number | null {
    let best: number | null = null;
    for (const bucket of this.#ring) {
      if (!this.#live(bucket, now)) continue;
      const value = bucket.maxes.get(key);
      if (value !== undefined && (best === null || value > best)) best = value;
    }
    return best;
  }

  /** Keys with a sum in the window that start with `prefix`. */
  keys(prefix: string, now: number): string[] {
    const out = new Set<string>();
    for (const bucket of this.#ring) {
      if (!this.#live(bucket, now)) continue;
      for (const key of bucket.sums.keys()) if (key.startsWith(prefix)) out.add(key);
    }
    return [...out].sort();
  }

  /** [from, to] of the data inside the window ending at `now` (ms), null before any data. */
  span(now: number): { readonly from: number; readonly to: number } | null {
    if (this.#firstTs === null || this.#lastTs === null) return null;
    const from = this.#windowMs === null ? this.#firstTs : Math.max(this.#firstTs, now - this.#windowMs);
    return { from, to: Math.min(this.#lastTs, now) };
  }

  #live(bucket: Bucket, now: number): boolean {
    if (this.#windowMs === null) return true;
    return bucket.start > now - this.#windowMs - this.#bucketMs && bucket.start <= now;
  }

  #bucket(ts: number): Bucket {
    if (this.#firstTs === null || ts < this.#firstTs) this.#firstTs = ts;
    if (this.#lastTs === null || ts > this.#lastTs) this.#lastTs = ts;
    if (this.#windowMs === null) return this.#ring[0]!;
    const index = Math.floor(ts / this.#bucketMs);
    const bucket = this.#ring[((index % this.#ring.length) + this.#ring.length) % this.#ring.length]!;
    const start = index * this.#bucketMs;
    if (bucket.start !== start) {
      if (start < bucket.start) return bucket; // a straggler older than the ring: counted in the newer bucket
      bucket.start = start;
      bucket.sums.clear();
      bucket.maxes.clear();
    }
    return bucket;
  }
}
