// TensorRT-LLM `v1_block_key` (Python hash_v1_block_key, C++ BlockKeyHasher::hash), docs/trtllm-wire.md §1.2.
// All arithmetic mod 2^64 on uint32 halves: no BigInt is allocated per token or per block in the chain path.
import { bigIntHi, bigIntLo, hashCombine, mul64, u64ToBigInt, type U64Scratch } from './u64.js';
import { createWasmTokenMixer, mixTokensJs, type TokenMixer } from './v1-token-mix.js';

const G = 0x9e3779b9;
const K1_HI = 0xbf58476d;
const K1_LO = 0x1ce4e5b9;
const K2_HI = 0x94d049bb;
const K2_LO = 0x133111eb;
const P_HI = K1_HI; // the parent multiplier is the same constant as K1
const P_LO = K1_LO;

export interface V1HashOptions {
  /** cache-salt id (u64); mixed into the first block of a chain only */
  readonly saltId?: bigint | null;
  /** LoRA id (u64); mixed after the tokens of every block */
  readonly loraId?: bigint | null;
}

const scratch: U64Scratch = new Uint32Array(2);
// per-token loop: WebAssembly (native i64) where available, else the JavaScript int32-halves loop
const mixTokens: TokenMixer = createWasmTokenMixer() ?? mixTokensJs;
const tmp: U64Scratch = new Uint32Array(2);

/** mix64(v, seed) where v = (vHi:vLo); result in `scratch` */
function mix64(vHi: number, vLo: number, seedHi: number, seedLo: number): void {
  // v ^= v >> 30
  let lo = (vLo ^ ((vLo >>> 30) | (vHi << 2))) >>> 0;
  let hi = (vHi ^ (vHi >>> 30)) >>> 0;
  mul64(hi, lo, K1_HI, K1_LO, tmp);
  hi = tmp[0]!;
  lo = tmp[1]!;
  // v ^= v >> 27
  lo = (lo ^ ((lo >>> 27) | (hi << 5))) >>> 0;
  hi = (hi ^ (hi >>> 27)) >>> 0;
  mul64(hi, lo, K2_HI, K2_LO, tmp);
  hi = tmp[0]!;
  lo = tmp[1]!;
  // v ^= v >> 31
  lo = (lo ^ ((lo >>> 31) | (hi << 1))) >>> 0;
  hi = (hi ^ (hi >>> 31)) >>> 0;
  // + G in 64-bit
  const loG = lo + G;
  lo = loG >>> 0;
  hi = (hi + Math.floor(loG / 0x1_0000_0000)) >>> 0;
  hashCombine(seedHi, seedLo, hi, lo, scratch);
}

/**
 * Hashes tokens[start, end) chained to the parent (hi:lo) and writes the result into `out` ([hi, lo]).
 * Salt is applied only when the parent is 0, as TensorRT-LLM does.
 */
export function hashV1Into(
  tokens: ArrayLike<number>,
  start: number,
  end: number,
  parentHi: number,
  parentLo: number,
  saltId: bigint | null,
  loraId: bigint | null,
  out: U64Scratch,
): void {
  // seed = len ^ (parent * P)
  mul64(parentHi, parentLo, P_HI, P_LO, tmp);
  let seedHi = tmp[0]!;
  let seedLo = (tmp[1]! ^ (end - start)) >>> 0;
  if (parentHi === 0 && parentLo === 0 && saltId !== null) {
    mix64(bigIntHi(saltId), bigIntLo(saltId), seedHi, seedLo);
    seedHi = scratch[0]!;
    seedLo = scratch[1]!;
  }
  mixTokens(tokens, start, end, seedHi, seedLo, scratch);
  seedHi = scratch[0]!;
  seedLo = scratch[1]!;
  if (loraId !== null) {
    mix64(bigIntHi(loraId), bigIntLo(loraId), seedHi, seedLo);
    seedHi = scratch[0]!;
    seedLo = scratch[1]!;
  }
  out[0] = seedHi;
  out[1] = seedLo;
}

// typed arrays use the platform's byte order: find where the low 32-bit word of a u64 sits
const LOW_WORD = new Uint32Array(new BigUint64Array([1n]).buffer)[0] === 1 ? 0 : 1;
const HIGH_WORD = 1 - LOW_WORD;

const single: U64Scratch = new Uint32Array(2);

/** v1_block_key of one block of tokens chained to `parent` (0n for the first block). */
export function hashV1Block(tokens: ArrayLike<number>, parent: bigint = 0n, options: V1HashOptions = {}): bigint {
  hashV1Into(
    tokens,
    0,
    tokens.length,
    bigIntHi(parent),
    bigIntLo(parent),
    options.saltId ?? null,
    options.loraId ?? null,
    single,
  );
  return u64ToBigInt(single[0]!, single[1]!);
}

/**
 * Chains tokens in blocks of `blockSize` (last block may be partial) starting from `parent`.
 * Returns one u64 per block, written through a uint32 view so no BigInt is created.
 */
export function hashV1Chain(
  tokens: ArrayLike<number>,
  blockSize: number,
  options: V1HashOptions = {},
  parent: bigint = 0n,
): BigUint64Array {
  const blockCount = Math.ceil(tokens.length / blockSize);
  const result = new BigUint64Array(blockCount);
  const halves = new Uint32Array(result.buffer);
  let parentHi = bigIntHi(parent);
  let parentLo = bigIntLo(parent);
  const saltId = options.saltId ?? null;
  const loraId = options.loraId ?? null;
  for (let b = 0; b < blockCount; b++) {
    const start = b * blockSize;
    const end = Math.min(start + blockSize, tokens.length);
    hashV1Into(tokens, start, end, parentHi, parentLo, saltId, loraId, single);
    parentHi = single[0]!;
    parentLo = single[1]!;
    halves[2 * b + LOW_WORD] = parentLo;
    halves[2 * b + HIGH_WORD] = parentHi;
  }
  return result;
}
