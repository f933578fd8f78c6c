// Seeded pseudo-random numbers (sfc32 seeded through splitmix32): same seed, same sequence, on every platform.
// The simulator never touches Math.random so a run is reproducible from its seed alone.

function splitmix32(state: number): [number, number] {
  const next = (state + 0x9e3779b9) | 0;
  let z = next;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  z ^= z >>> 16;
  return [next, z >>> 0];
}

export class Rng {
  #a: number;
  #b: number;
  #c: number;
  #d: number;

  constructor(seed: number, stream = 0) {
    let state = (seed ^ Math.imul(stream + 1, 0x632be5ab)) | 0;
    const words: number[] = [];
    for (let i = 0; i < 4; i++) {
      const [next, value] = splitmix32(state);
      state = next;
      words.push(value);
    }
    this.#a = words[0]!;
    this.#b = words[1]!;
    this.#c = words[2]!;
    this.#d = words[3]!;
    for (let i = 0; i < 12; i++) this.nextU32();
  }

  nextU32(): number {
    const t = (((this.#a + this.#b) | 0) + this.#d) | 0;
    this.#d = (this.#d + 1) | 0;
    this.#a = this.#b ^ (this.#b >>> 9);
    this.#b = (this.#c + (this.#c << 3)) | 0;
    this.#c = (this.#c << 21) | (this.#c >>> 11);
    this.#c = (this.#c + t) | 0;
    return t >>> 0;
  }

  /** uniform in [0, 1) */
  next(): number {
    return this.nextU32() / 0x1_0000_0000;
  }

  /** integer uniform in [lo, hi) */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo));
  }

  /** standard normal (Box–Muller) */
  normal(): number {
    const u = 1 - this.next();
    const v = this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  /** log-normal with the given median and log-space sigma */
  logNormal(median: number, sigma: number): number {
    return median * Math.exp(sigma * this.normal());
  }

  /** exponential with the given mean */
  exponential(mean: number): number {
    return -mean * Math.log(1 - this.next());
  }

  /** fills `out` with token ids in [lo, hi) */
  fillTokens(out: Uint32Array, lo: number, hi: number): void {
    const span = hi - lo;
    for (let i = 0; i < out.length; i++) out[i] = lo + (this.nextU32() % span);
  }
}
