// The per-token part of v1_block_key (docs/trtllm-wire.md §1.2): seed = mix32(token, seed) for every token of a block.
// Two implementations with one contract: a WebAssembly loop with native i64 arithmetic (the fast path, ~2× the
// JavaScript one because the 64-bit seed update is serial and JavaScript has to split it into int32 halves), and
// the pure JavaScript loop (fallback where WebAssembly is unavailable, e.g. `node --jitless`, or on big-endian
// hosts). The WebAssembly module is tiny and encoded below, instruction by instruction (wasm/wasm-binary.ts); its
// commented text is v1-token-mix.wat, which a test assembles with wabt and compares with these bytes.
import type { U64Scratch } from './u64.js';
import {
  I32,
  I64,
  op,
  i32Const,
  vec,
  instantiateKernel,
  type WasmMemory,
  singleFunctionModule,
} from '../wasm/wasm-binary.js';

/** Runs mix32 over tokens[start, end) starting from seed (hi:lo); writes the seed into out as [hi, lo]. */
export type TokenMixer = (
  tokens: ArrayLike<number>,
  start: number,
  end: number,
  seedHi: number,
  seedLo: number,
  out: U64Scratch,
) => void;

const C32 = 0x045d9f3b;
const G = 0x9e3779b9;
const TWO_POW_MINUS_32 = 2 ** -32;

/**
 * JavaScript loop in signed int32 arithmetic: V8 keeps every value in an integer register (uint32 values above
 * 2^31 would become doubles). Only the low-word sum is a double, to get the carry: carry = floor(loSum / 2^32)
 * ∈ {0, 1, 2}, taken branch-free (× 2^-32 is exact in a double) because carries are random and a
 * compare-and-branch mispredicts about every other token. Unrolled by two so a pair's independent token mixes
 * overlap the serial seed update.
 */
export const mixTokensJs: TokenMixer = (tokens, start, end, seedHi, seedLo, out) => {
  let hi = seedHi | 0;
  let lo = seedLo | 0;
  let i = start;
  for (; i + 1 < end; i += 2) {
    let v = tokens[i]! | 0;
    let w = tokens[i + 1]! | 0;
    v = Math.imul((v >>> 16) ^ v, C32);
    w = Math.imul((w >>> 16) ^ w, C32);
    v = Math.imul((v >>> 16) ^ v, C32);
    w = Math.imul((w >>> 16) ^ w, C32);
    v = (((v >>> 16) ^ v) + G) | 0;
    w = (((w >>> 16) ^ w) + G) | 0;
    // seed ^= v + (seed << 6) + (seed >> 2), mod 2^64; then the same with w
    let loSum = (v >>> 0) + ((lo << 6) >>> 0) + (((lo >>> 2) | (hi << 30)) >>> 0);
    hi ^= (((hi << 6) | (lo >>> 26)) + (hi >>> 2) + ((loSum * TWO_POW_MINUS_32) | 0)) | 0;
    lo ^= loSum | 0;
    loSum = (w >>> 0) + ((lo << 6) >>> 0) + (((lo >>> 2) | (hi << 30)) >>> 0);
    hi ^= (((hi << 6) | (lo >>> 26)) + (hi >>> 2) + ((loSum * TWO_POW_MINUS_32) | 0)) | 0;
    lo ^= loSum | 0;
  }
  if (i < end) {
    let v = tokens[i]! | 0;
    v = Math.imul((v >>> 16) ^ v, C32);
    v = Math.imul((v >>> 16) ^ v, C32);
    v = (((v >>> 16) ^ v) + G) | 0;
    const loSum = (v >>> 0) + ((lo << 6) >>> 0) + (((lo >>> 2) | (hi << 30)) >>> 0);
    hi ^= (((hi << 6) | (lo >>> 26)) + (hi >>> 2) + ((loSum * TWO_POW_MINUS_32) | 0)) | 0;
    lo ^= loSum | 0;
  }
  out[0] = hi >>> 0;
  out[1] = lo >>> 0;
};

/** Tokens are copied to this byte offset of the module's memory; the resulting seed is stored at offset 0. */
const TOKENS_AT = 16;

// mix's params 0 len, 1 hi, 2 lo; locals 3 seed (i64), 4 p, 5 end, 6 v (i32)
const [LEN, HI, LO, SEED, P, END, V] = [0, 1, 2, 3, 4, 5, 6];

/** v = ((v >>> 16) ^ v) * C32, or + G for the last step */
function mixStep(add: number): number[] {
  return [
    op.localGet,
    V,
    op.i32Const,
    16,
    op.i32ShrU,
    op.localGet,
    V,
    op.i32Xor,
    ...i32Const(add === G ? G : C32),
    add === G ? op.i32Add : op.i32Mul,
    op.localSet,
    V,
  ];
}

/** seed = (u64(hi) << 32) | u64(lo); p = TOKENS_AT; end = TOKENS_AT + len * 4 */
function prologue(): number[] {
  return [
    op.localGet,
    HI,
    op.i64ExtendI32U,
    op.i64Const,
    32,
    op.i64Shl,
    op.localGet,
    LO,
    op.i64ExtendI32U,
    op.i64Or,
    op.localSet,
    SEED,
    op.i32Const,
    TOKENS_AT,
    op.localSet,
    P,
    op.localGet,
    LEN,
    op.i32Const,
    2,
    op.i32Shl,
    op.i32Const,
    TOKENS_AT,
    op.i32Add,
    op.localSet,
    END,
  ];
}

/** if p >= end: break; v = memory.u32[p] (align 2^2, offset 0) */
function loadToken(): number[] {
  return [op.localGet, P, op.localGet, END, op.i32GeU, op.brIf, 1, op.localGet, P, op.i32Load, 2, 0, op.localSet, V];
}

/** seed ^= u64(v) + (seed << 6) + (seed >> 2) */
function seedUpdate(): number[] {
  return [
    op.localGet,
    SEED,
    op.localGet,
    V,
    op.i64ExtendI32U,
    op.localGet,
    SEED,
    op.i64Const,
    6,
    op.i64Shl,
    op.i64Add,
    op.localGet,
    SEED,
    op.i64Const,
    2,
    op.i64ShrU,
    op.i64Add,
    op.i64Xor,
    op.localSet,
    SEED,
  ];
}

/** p += 4; continue */
function nextToken(): number[] {
  return [op.localGet, P, op.i32Const, 4, op.i32Add, op.localSet, P, op.br, 0];
}

/** mix's body: its locals, the prologue, the loop over the tokens, memory.u64[0] = seed (align 2^3, offset 0) */
function mixCode(): number[] {
  const loopBody = [...loadToken(), ...mixStep(C32), ...mixStep(C32), ...mixStep(G), ...seedUpdate(), ...nextToken()];
  return [
    ...vec([
      [1, I64],
      [3, I32],
    ]),
    ...prologue(),
    op.block,
    op.void,
    op.loop,
    op.void,
    ...loopBody,
    op.end,
    op.end,
    ...[op.i32Const, 0, op.localGet, SEED, op.i64Store, 3, 0],
    op.end,
  ];
}

/**
 * mix(len: i32, seedHi: i32, seedLo: i32): the loop over `len` u32 tokens at TOKENS_AT; seed (i64) → memory[0]. Its
 * text is v1-token-mix.wat, checked against these bytes by test/core/wasm-kernel-sources.test.ts.
 */
export function mixModuleBytes(): Uint8Array {
  return singleFunctionModule({ name: 'mix', params: 3, code: mixCode() });
}

/** The WebAssembly mixer, or null where WebAssembly is unavailable or the host is big-endian. */
export function createWasmTokenMixer(): TokenMixer | null {
  const exports = instantiateKernel(mixModuleBytes());
  if (exports === null) return null;
  const mix = exports.mix as (len: number, hi: number, lo: number) => void;
  const memory = exports.memory as WasmMemory;
  let words = new Uint32Array(memory.buffer);
  const first = TOKENS_AT / 4;
  return (tokens, start, end, seedHi, seedLo, out) => {
    const count = end - start;
    if (first + count > words.length) {
      memory.grow(Math.ceil(((first + count) * 4 - memory.buffer.byteLength) / 65536));
      words = new Uint32Array(memory.buffer);
    }
    if (tokens instanceof Uint32Array) {
      words.set(tokens.subarray(start, end), first);
    } else {
      // ToUint32 on store: the same token id as `| 0` in the JavaScript loop
      for (let i = 0; i < count; i++) words[first + i] = tokens[start + i]!;
    }
    mix(count, seedHi, seedLo);
    out[0] = words[1]!;
    out[1] = words[0]!;
  };
}
