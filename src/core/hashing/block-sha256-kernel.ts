// SHA-256's compression as a WebAssembly kernel: the fast path of block-sha256.ts (1.3x its JavaScript loop, which
// stays the fallback and the reference). The module is encoded below instruction by instruction
// (wasm/wasm-binary.ts); its commented text is block-sha256.wat, which a test assembles with wabt and compares with
// these bytes. The caller lays the padded message out as words; the kernel compresses it and leaves the digest.
import {
  I32,
  i32Const,
  localGet as get,
  localSet as set,
  localTee as tee,
  op,
  vec,
  instantiateKernel,
  WASM_PAGE_BYTES,
  type WasmMemory,
  singleFunctionModule,
} from '../wasm/wasm-binary.js';

/** byte offsets of the kernel's memory (block-sha256.wat): digest, round constants, schedule, message */
const DIGEST_AT = 0;
const K_AT = 256;
const W_AT = 512;
export const MESSAGE_AT = 1024;

/** FIPS 180-4 §4.2.2 */
export const SHA256_K: Uint32Array = Uint32Array.from([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);
/** FIPS 180-4 §5.3.3 */
export const SHA256_H0: Uint32Array = Uint32Array.from([
  0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
]);

// hash's param 0 blocks; locals 1..8 the working variables a..h, 9..16 the hash h0..h7, then m, i, x, t1
const BLOCKS = 0;
const [A, B, C, D, E, F, G, H] = [1, 2, 3, 4, 5, 6, 7, 8];
const HASH = 9;
const [M, I, X, T1] = [17, 18, 19, 20];
const LOCALS = 20;

const load = [op.i32Load, 2, 0]; // align 2^2, offset 0
const store = [op.i32Store, 2, 0];
const add = (local: number, k: number): number[] => [...get(local), ...i32Const(k), op.i32Add];

/** (x >>> r1) ^ (x >>> r2) ^ (x >>> r3), or ^ (x >> r3) for the schedule's σ */
function sigma(x: number, r1: number, r2: number, r3: number, lastIsShift: boolean): number[] {
  return [
    ...get(x),
    ...i32Const(r1),
    op.i32Rotr,
    ...get(x),
    ...i32Const(r2),
    op.i32Rotr,
    op.i32Xor,
    ...get(x),
    ...i32Const(r3),
    lastIsShift ? op.i32ShrU : op.i32Rotr,
    op.i32Xor,
  ];
}

/** i += 4; loop again while i < end */
const nextWord = (end: number): number[] => [...add(I, 4), ...tee(I), ...i32Const(end), op.i32LtU, op.brIf, 0];

/** W[0..16) = the block's words */
const copyBlock = (): number[] => [
  ...i32Const(0),
  ...set(I),
  op.loop,
  op.void,
  ...add(I, W_AT),
  ...get(M),
  ...get(I),
  op.i32Add,
  ...load,
  ...store,
  ...nextWord(64),
  op.end,
];

/** W[t] = σ1(W[t-2]) + W[t-7] + σ0(W[t-15]) + W[t-16], t = 16..63 */
const schedule = (): number[] => [
  op.loop,
  op.void,
  ...add(I, W_AT),
  ...add(I, W_AT - 64),
  ...load,
  ...add(I, W_AT - 60),
  ...load,
  ...tee(X),
  ...sigma(X, 7, 18, 3, true).slice(2), // x is on the stack already (tee)
  op.i32Add,
  ...add(I, W_AT - 28),
  ...load,
  op.i32Add,
  ...add(I, W_AT - 8),
  ...load,
  ...tee(X),
  ...sigma(X, 17, 19, 10, true).slice(2),
  op.i32Add,
  ...store,
  ...nextWord(256),
  op.end,
];

/** the 64 rounds over W */
const rounds = (): number[] => [
  ...i32Const(0),
  ...set(I),
  op.loop,
  op.void,
  // T1 = h + Σ1(e) + Ch(e, f, g) + K[t] + W[t]
  ...get(H),
  ...sigma(E, 6, 11, 25, false),
  op.i32Add,
  ...[...get(G), ...get(E), ...get(F), ...get(G), op.i32Xor, op.i32And, op.i32Xor],
  op.i32Add,
  ...add(I, K_AT),
  ...load,
  op.i32Add,
  ...add(I, W_AT),
  ...load,
  op.i32Add,
  ...set(T1),
  ...[...get(G), ...set(H), ...get(F), ...set(G), ...get(E), ...set(F)],
  ...[...get(D), ...get(T1), op.i32Add, ...set(E)],
  ...[...get(C), ...set(D), ...get(B), ...set(C), ...get(A), ...set(B)],
  // a = T1 + Σ0(a) + Maj(a, b, c), of the old a, b, c: now b, c, d
  ...get(T1),
  ...sigma(B, 2, 13, 22, false),
  op.i32Add,
  ...[...get(B), ...get(C), op.i32And, ...get(D), ...get(B), ...get(C), op.i32Or, op.i32And, op.i32Or],
  op.i32Add,
  ...set(A),
  ...nextWord(256),
  op.end,
];

function hashCode(): number[] {
  const working = [A, B, C, D, E, F, G, H];
  return [
    ...vec([[LOCALS, I32]]),
    ...[...SHA256_H0].flatMap((v, j) => [...i32Const(v), ...set(HASH + j)]),
    ...i32Const(MESSAGE_AT),
    ...set(M),
    op.block,
    op.void,
    op.loop,
    op.void,
    ...[...get(BLOCKS), op.i32Eqz, op.brIf, 1],
    ...copyBlock(),
    ...schedule(),
    ...working.flatMap((w, j) => [...get(HASH + j), ...set(w)]),
    ...rounds(),
    ...working.flatMap((w, j) => [...get(HASH + j), ...get(w), op.i32Add, ...set(HASH + j)]),
    ...[...add(M, 64), ...set(M)],
    ...[...get(BLOCKS), ...i32Const(1), op.i32Sub, ...set(BLOCKS)],
    ...[op.br, 0],
    op.end,
    op.end,
    ...working.flatMap((_, j) => [...i32Const(DIGEST_AT + 4 * j), ...get(HASH + j), ...store]),
    op.end,
  ];
}

/** hash(blocks: i32): compresses `blocks` 64-byte blocks at MESSAGE_AT from H0; the digest → memory[0..32). */
export function sha256ModuleBytes(): Uint8Array {
  return singleFunctionModule({ name: 'hash', params: 1, code: hashCode() });
}

/** The kernel, bound: its memory as words, and a call that compresses the message laid out there. */
export interface Sha256Kernel {
  /** the memory as i32 words; replaced when the memory grows */
  words: Int32Array;
  /** makes room for a message of `words` words at MESSAGE_AT */
  reserve(words: number): void;
  /** compresses `blocks` blocks of the message; the digest is then words[0..8) */
  compress(blocks: number): void;
}

/** A kernel of its own memory, or null where WebAssembly is unavailable or the host is big-endian. */
export function createSha256Kernel(): Sha256Kernel | null {
  const exports = instantiateKernel(sha256ModuleBytes());
  if (exports === null) return null;
  const hash = exports.hash as (blocks: number) => void;
  const memory = exports.memory as WasmMemory;
  const kernel: Sha256Kernel = {
    words: new Int32Array(memory.buffer),
    reserve(words) {
      const bytes = MESSAGE_AT + 4 * words;
      if (bytes <= memory.buffer.byteLength) return;
      memory.grow(Math.ceil((bytes - memory.buffer.byteLength) / WASM_PAGE_BYTES));
      kernel.words = new Int32Array(memory.buffer);
    },
    compress: hash,
  };
  kernel.words.set(new Int32Array(SHA256_K.buffer), K_AT / 4);
  return kernel;
}
