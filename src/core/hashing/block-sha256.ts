// SHA-256 (FIPS 180-4) of one V2 block-key message, parent key ‖ tokens as uint32 little-endian, written for the
// stream's rate: the message is laid out as big-endian words straight from the parent's bytes and the token ids (a
// little-endian u32 is its byte-swapped word), padded in place, and compressed in one reused word buffer, so a key
// costs one 32-byte result and nothing else. A ZMQ stream re-keys every stored block this way (rekeyer.ts); the
// general hash is @noble/hashes, which allocates per call and ran at a third of this speed on 16-token blocks.

const K = Uint32Array.from([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);
const H0 = Uint32Array.from([
  0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
]);

const swap = (x: number): number =>
  ((x & 0xff) << 24) | ((x & 0xff00) << 8) | ((x >>> 8) & 0xff00) | ((x >>> 24) & 0xff);

/** One hasher's scratch: a caller that hashes often keeps one (a re-keyer per stream), so nothing is shared. */
export class BlockSha256 {
  /** message words, grown to the longest block seen */
  #words = new Int32Array(64);
  readonly #w = new Int32Array(64);
  readonly #h = new Int32Array(8);

  #compress(offset: number): void {
    const words = this.#words;
    const w = this.#w;
    const h = this.#h;
    for (let i = 0; i < 16; i++) w[i] = words[offset + i]!;
    for (let i = 16; i < 64; i++) {
      const a = w[i - 15]!;
      const b = w[i - 2]!;
      const s0 = ((a >>> 7) | (a << 25)) ^ ((a >>> 18) | (a << 14)) ^ (a >>> 3);
      const s1 = ((b >>> 17) | (b << 15)) ^ ((b >>> 19) | (b << 13)) ^ (b >>> 10);
      w[i] = (w[i - 16]! + s0 + w[i - 7]! + s1) | 0;
    }
    let a = h[0]!;
    let b = h[1]!;
    let c = h[2]!;
    let d = h[3]!;
    let e = h[4]!;
    let f = h[5]!;
    let g = h[6]!;
    let hh = h[7]!;
    for (let i = 0; i < 64; i++) {
      const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const ch = (e & f) ^ (~e & g);
      const t1 = (hh + S1 + ch + K[i]! + w[i]!) | 0;
      const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const maj = (a & b) ^ (a & c) ^ (b & c);
      const t2 = (S0 + maj) | 0;
      hh = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    h[0] = (h[0]! + a) | 0;
    h[1] = (h[1]! + b) | 0;
    h[2] = (h[2]! + c) | 0;
    h[3] = (h[3]! + d) | 0;
    h[4] = (h[4]! + e) | 0;
    h[5] = (h[5]! + f) | 0;
    h[6] = (h[6]! + g) | 0;
    h[7] = (h[7]! + hh) | 0;
  }

  /** SHA-256(parent (32 bytes) ‖ tokens[start, end) as uint32 LE). */
  hash(parent: Uint8Array, tokens: ArrayLike<number>, start: number, end: number): Uint8Array {
    const count = end - start;
    // 8 parent words, the tokens, the 0x80 byte's word, then the 64-bit bit length in the last two words of a block
    const blocks = Math.ceil((8 + count + 1 + 2) / 16);
    const total = blocks * 16;
    if (this.#words.length < total) this.#words = new Int32Array(total * 2);
    const words = this.#words;
    const h = this.#h;
    for (let i = 0; i < 8; i++)
      words[i] = (parent[4 * i]! << 24) | (parent[4 * i + 1]! << 16) | (parent[4 * i + 2]! << 8) | parent[4 * i + 3]!;
    for (let i = 0; i < count; i++) words[8 + i] = swap(tokens[start + i]! | 0);
    words[8 + count] = 0x80000000 | 0;
    for (let i = 9 + count; i < total - 1; i++) words[i] = 0;
    // at most 2^32 bits here: the high word of the length is 0
    words[total - 1] = (32 + 4 * count) * 8;
    h.set(H0);
    for (let b = 0; b < blocks; b++) this.#compress(b * 16);
    const out = new Uint8Array(32);
    for (let i = 0; i < 8; i++) {
      const v = h[i]!;
      out[4 * i] = v >>> 24;
      out[4 * i + 1] = (v >>> 16) & 0xff;
      out[4 * i + 2] = (v >>> 8) & 0xff;
      out[4 * i + 3] = v & 0xff;
    }
    return out;
  }
}
