// Exact sets of u64 block keys indexed by a 30-bit fingerprint (the key's low 30 bits, a V8 small integer):
// Map lookups on a small integer are many times faster than on a bigint, and the full key is still compared,
// so a fingerprint collision never merges two blocks.

const FP_MASK = 0x3fff_ffffn;

export function fingerprint(key: bigint): number {
  return Number(key & FP_MASK);
}

/** fingerprint from the key's uint32 halves, without a BigInt */
export function fingerprintOf(_hi: number, lo: number): number {
  return lo & 0x3fff_ffff;
}

export class BlockKeySet {
  readonly #map = new Map<number, bigint | bigint[]>();
  #size = 0;

  get size(): number {
    return this.#size;
  }

  has(key: bigint, fp: number = fingerprint(key)): boolean {
    const slot = this.#map.get(fp);
    if (slot === undefined) return false;
    return typeof slot === 'bigint' ? slot === key : slot.includes(key);
  }

  add(key: bigint, fp: number = fingerprint(key)): void {
    const slot = this.#map.get(fp);
    if (slot === undefined) {
      this.#map.set(fp, key);
    } else if (typeof slot === 'bigint') {
      if (slot === key) return;
      this.#map.set(fp, [slot, key]);
    } else {
      if (slot.includes(key)) return;
      slot.push(key);
    }
    this.#size++;
  }

  delete(key: bigint, fp: number = fingerprint(key)): boolean {
    const slot = this.#map.get(fp);
    if (slot === undefined) return false;
    if (typeof slot === 'bigint') {
      if (slot !== key) return false;
      this.#map.delete(fp);
    } else {
      const i = slot.indexOf(key);
      if (i < 0) return false;
      slot.splice(i, 1);
      if (slot.length === 1) this.#map.set(fp, slot[0]!);
    }
    this.#size--;
    return true;
  }

  clear(): void {
    this.#map.clear();
    this.#size = 0;
  }

  *[Symbol.iterator](): IterableIterator<bigint> {
    for (const slot of this.#map.values()) {
      if (typeof slot === 'bigint') yield slot;
      else yield* slot;
    }
  }
}
