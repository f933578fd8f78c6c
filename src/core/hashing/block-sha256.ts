// SHA-256 (FIPS 180-4) of one V2 block-key message, parent key ‖ tokens as uint32 little-endian, written for the
// stream's rate: the message is laid out as big-endian words straight from the parent's bytes and the token ids (a
// little-endian u32 is its byte-swapped word), padded in place, and compressed in one reused word buffer (the
// kernel's memory, or the hasher's own), so a key costs one 32-byte result and nothing else. A ZMQ stream re-keys
// every stored block this way (rekeyer.ts); the general hash is @noble/hashes, which allocates per call and ran at a
// third of this speed on 16-token blocks. The compression runs in a WebAssembly kernel where there is one
// (block-sha256-kernel.ts, 1.3x this file's loop on 16-token blocks: BENCHMARKS §10), else in the JavaScript loop
// below, which is also the kernel's reference in the tests.
import { createSha256Kernel, MESSAGE_AT, SHA256_H0, SHA256_K, type Sha256Kernel } from './block-sha256-kernel.js';

const K = SHA256_K;
const H0 = SHA256_H0;

export interface BlockSha256Options {
  /**
   * false: the JavaScript compression even where the kernel runs. A hasher made for one key should say so (compiling
   * the kernel costs more than it saves there); the tests hold the two paths to each other.
   */
  readonly wasm?: boolean;
}

const swap = (x: number): number =>
  ((x & 0xff) << 24) | ((x & 0xff00) << 8) | ((x >>> 8) & 0xff00) | ((x >>> 24) & 0xff);

/** One hasher, with a kernel of its own (or its own scratch): a caller that hashes often keeps one (a re-keyer). */
export class BlockSha256 {
  readonly #kernel: Sha256Kernel | null;
  /** message words, grown to the longest block seen */
  #words = new Int32Array(64);
  readonly #w = new Int32Array(64);
  readonly #h = new Int32Array(8);

  constructor(options: BlockSha256Options = {}) {
    this.#kernel = options.wasm === false ? null : createSha256Kernel();
  }

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
    const k = this.#kernel;
    let words: Int32Array;
    let at = 0;
    if (k !== null) {
      k.reserve(total);
      words = k.words;
      at = MESSAGE_AT / 4;
    } else {
      if (this.#words.length < total) this.#words = new Int32Array(total * 2);
      words = this.#words;
    }
    for (let i = 0; i < 8; i++)
      words[at + i] =
        (parent[4 * i]! << 24) | (parent[4 * i + 1]! << 16) | (parent[4 * i + 2]! << 8) | parent[4 * i + 3]!;
    for (let i = 0; i < count; i++) words[at + 8 + i] = swap(tokens[start + i]! | 0);
    words[at + 8 + count] = 0x80000000 | 0;
    for (let i = 9 + count; i < total - 1; i++) words[at + i] = 0;
    // at most 2^32 bits here: the high word of the length is 0
    words[at + total - 1] = (32 + 4 * count) * 8;
    let digest: Int32Array;
    if (k !== null) {
      k.compress(blocks);
      digest = k.words;
    } else {
      this.#h.set(H0);
      for (let b = 0; b < blocks; b++) this.#compress(b * 16);
      digest = this.#h;
    }
    const out = new Uint8Array(32);
    for (let i = 0; i < 8; i++) {
      const v = digest[i]!;
      out[4 * i] = v >>> 24;
      out[4 * i + 1] = (v >>> 16) & 0xff;
      out[4 * i + 2] = (v >>> 8) & 0xff;
      out[4 * i + 3] = v & 0xff;
    }
    return out;
  }
}
