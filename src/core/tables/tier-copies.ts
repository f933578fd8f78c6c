// Physical copies of blocks per cache level (0 = GPU, 1 = CPU, 2 = disk, 3 = other), for engines that store and
// remove each copy separately: vLLM's block pool does not deduplicate (two requests computing the same prefix cache
// two GPU copies, each removed on its own) and its offloading connector publishes the CPU copy of a block as a store
// of its own (`vllm/v1/core/block_pool.py`, the offloading connector's `take_events`). A block is held at a level
// while any copy is there. One set per level with the copy count in the payload byte; counts past 254 (never seen,
// but possible) live in a side map so nothing saturates.
import { splitU64Key as split, U64HashSet } from './u64-hash-set.js';

/** Payload that means "the count is in the overflow map". */
const OVERFLOW = 255;

function halvesKey(level: number, hi: number, lo: number): string {
  return `${level}:${hi}:${lo}`;
}

export class TierCopies {
  readonly #levels: U64HashSet[] = [];
  readonly #overflow = new Map<string, number>();

  /** Copies of `key` held at `level` (0 when none). */
  count(key: bigint, level: number): number {
    const [hi, lo] = split(key);
    return this.#count(level, hi, lo);
  }

  /** Adds one copy at `level`; returns the copies held there now. */
  add(key: bigint, level: number): number {
    const [hi, lo] = split(key);
    return this.addHalves(hi, lo, level);
  }

  addHalves(hi: number, lo: number, level: number): number {
    const set = this.#level(level);
    const n = this.#count(level, hi, lo) + 1;
    if (n < OVERFLOW) {
      if (n === 1) set.addHalves(hi, lo, 1);
      else set.setPayloadHalves(hi, lo, n);
    } else {
      set.setPayloadHalves(hi, lo, OVERFLOW);
      this.#overflow.set(halvesKey(level, hi, lo), n);
    }
    return n;
  }

  /** Removes one copy at `level`; returns the copies left there, or -1 when none was held. */
  remove(key: bigint, level: number): number {
    const [hi, lo] = split(key);
    return this.removeHalves(hi, lo, level);
  }

  removeHalves(hi: number, lo: number, level: number): number {
    const n = this.#count(level, hi, lo);
    if (n === 0) return -1;
    this.#set(level, hi, lo, n - 1);
    return n - 1;
  }

  /** The lowest level holding a copy of `key`, or -1. */
  lowest(key: bigint): number {
    const [hi, lo] = split(key);
    return this.lowestHalves(hi, lo);
  }

  lowestHalves(hi: number, lo: number): number {
    for (let level = 0; level < this.#levels.length; level++) if (this.#levels[level]!.hasHalves(hi, lo)) return level;
    return -1;
  }

  /** Forgets every copy of a key (the table's cap evicted it). */
  deleteHalves(hi: number, lo: number): void {
    this.#levels.forEach((set, level) => {
      if (set.deleteHalves(hi, lo) && this.#overflow.size > 0) this.#overflow.delete(halvesKey(level, hi, lo));
    });
  }

  /** Drops every copy at `level`; returns the keys (as halves pairs) that were held there. */
  clearLevel(level: number): number[] {
    const set = this.#levels[level];
    if (set === undefined) return [];
    const halves: number[] = [];
    set.forEachHalves((hi, lo) => halves.push(hi, lo));
    set.clear();
    for (const k of [...this.#overflow.keys()]) if (k.startsWith(`${level}:`)) this.#overflow.delete(k);
    return halves;
  }

  clear(): void {
    for (const set of this.#levels) set.clear();
    this.#overflow.clear();
  }

  /** Distinct keys held per level (index = level). */
  sizes(): number[] {
    return this.#levels.map((set) => set.size);
  }

  get byteLength(): number {
    let n = 0;
    for (const set of this.#levels) n += set.byteLength;
    return n;
  }

  #count(level: number, hi: number, lo: number): number {
    const payload = this.#levels[level]?.payloadHalves(hi, lo) ?? -1;
    if (payload < 0) return 0;
    return payload === OVERFLOW ? (this.#overflow.get(halvesKey(level, hi, lo)) ?? OVERFLOW) : payload;
  }

  #set(level: number, hi: number, lo: number, n: number): void {
    const set = this.#level(level);
    // the overflow's key is a string: built only when some count ever passed 254 (never, in practice)
    if (n === 0) {
      set.deleteHalves(hi, lo);
      if (this.#overflow.size > 0) this.#overflow.delete(halvesKey(level, hi, lo));
    } else if (n < OVERFLOW) {
      set.setPayloadHalves(hi, lo, n);
      if (this.#overflow.size > 0) this.#overflow.delete(halvesKey(level, hi, lo));
    } else this.#overflow.set(halvesKey(level, hi, lo), n);
  }

  #level(level: number): U64HashSet {
    while (this.#levels.length <= level) this.#levels.push(new U64HashSet());
    return this.#levels[level]!;
  }
}
