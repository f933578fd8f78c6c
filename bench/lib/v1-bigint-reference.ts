// A direct BigInt transcription of v1_block_key (docs/trtllm-wire.md §1.2): the "obvious" JavaScript implementation,
// measured as the baseline the project's hasher must beat. One BigInt operation chain per token.

const M64 = (1n << 64n) - 1n;
const M32 = (1n << 32n) - 1n;
const C32 = 0x045d9f3bn;
const K1 = 0xbf58476d1ce4e5b9n;
const K2 = 0x94d049bb133111ebn;
const G = 0x9e3779b9n;

function mix32(value: bigint, seed: bigint): bigint {
  let v = value & M32;
  v = (((v >> 16n) ^ v) * C32) & M32;
  v = (((v >> 16n) ^ v) * C32) & M32;
  v = (v >> 16n) ^ v;
  v = (v + G) & M32;
  return seed ^ ((v + (seed << 6n) + (seed >> 2n)) & M64);
}

function mix64(value: bigint, seed: bigint): bigint {
  let v = value & M64;
  v = ((v ^ (v >> 30n)) * K1) & M64;
  v = ((v ^ (v >> 27n)) * K2) & M64;
  v ^= v >> 31n;
  return seed ^ ((v + G + (seed << 6n) + (seed >> 2n)) & M64);
}

export function bigIntV1Block(
  tokens: ArrayLike<number>,
  start: number,
  end: number,
  parent: bigint,
  saltId: bigint | null = null,
  loraId: bigint | null = null,
): bigint {
  let seed = (BigInt(end - start) ^ ((parent * K1) & M64)) & M64;
  if (parent === 0n && saltId !== null) seed = mix64(saltId, seed);
  for (let i = start; i < end; i++) seed = mix32(BigInt(tokens[i]!), seed);
  if (loraId !== null) seed = mix64(loraId, seed);
  return seed;
}

export function bigIntV1Chain(tokens: ArrayLike<number>, blockSize: number): BigUint64Array {
  const count = Math.ceil(tokens.length / blockSize);
  const out = new BigUint64Array(count);
  let parent = 0n;
  for (let b = 0; b < count; b++) {
    const start = b * blockSize;
    parent = bigIntV1Block(tokens, start, Math.min(start + blockSize, tokens.length), parent);
    out[b] = parent;
  }
  return out;
}
