// TensorRT-LLM KV-cache-manager V2 block keys (`_block_radix_tree.py`), docs/trtllm-wire.md §1.3.
// key(block) = SHA-256(parent key ‖ tokens as uint32 little-endian); root = SHA-256(scope bytes).
import { sha256 } from '@noble/hashes/sha2.js';
import { BlockSha256 } from './block-sha256.js';

export interface V2Scope {
  readonly loraId?: bigint | null;
  readonly saltId?: bigint | null;
}

function writeU64Le(target: Uint8Array, offset: number, value: bigint): void {
  let v = value;
  for (let i = 0; i < 8; i++) {
    target[offset + i] = Number(v & 0xffn);
    v >>= 8n;
  }
}

/** Root key of a reuse scope: mask byte (bit0 lora, bit1 salt) then each present field as u64 LE. */
export function v2RootKey(scope: V2Scope = {}): Uint8Array {
  const lora = scope.loraId ?? null;
  const salt = scope.saltId ?? null;
  const bytes = new Uint8Array(1 + (lora === null ? 0 : 8) + (salt === null ? 0 : 8));
  bytes[0] = (lora === null ? 0 : 1) | (salt === null ? 0 : 2);
  let offset = 1;
  if (lora !== null) {
    writeU64Le(bytes, offset, lora);
    offset += 8;
  }
  if (salt !== null) writeU64Le(bytes, offset, salt);
  return sha256(bytes);
}

/**
 * Key of one block: SHA-256(parent (32 bytes) ‖ tokens[start, end) as uint32 LE). A caller that keys many blocks
 * passes its own `hasher` (its scratch is reused); without one each call makes its own.
 */
export function v2BlockKey(
  parent: Uint8Array,
  tokens: ArrayLike<number>,
  start = 0,
  end = tokens.length,
  // a one-off key: the JavaScript loop (a kernel costs more to compile than one key saves)
  hasher: BlockSha256 = new BlockSha256({ wasm: false }),
): Uint8Array {
  return hasher.hash(parent, tokens, start, end);
}

/** Chained keys of tokens in blocks of `blockSize` (last block may be partial). */
export function v2Chain(tokens: ArrayLike<number>, blockSize: number, scope: V2Scope = {}): Uint8Array[] {
  const keys: Uint8Array[] = [];
  let parent = v2RootKey(scope);
  for (let start = 0; start < tokens.length; start += blockSize) {
    parent = v2BlockKey(parent, tokens, start, Math.min(start + blockSize, tokens.length));
    keys.push(parent);
  }
  return keys;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** `v2_sha256` wire form: lowercase hex of the 32-byte key. */
export function keyToHex(key: Uint8Array): string {
  let out = '';
  for (const byte of key) out += HEX[byte]!;
  return out;
}

/** `v2_sha256_64` wire form: first 8 bytes big-endian, unsigned. */
export function truncateKeyToU64(key: Uint8Array): bigint {
  // two 32-bit halves, not a BigInt per byte nor a DataView (reading a small array's .buffer moves it off the
  // heap): every re-keyed stream block takes this
  const hi = ((key[0]! << 24) | (key[1]! << 16) | (key[2]! << 8) | key[3]!) >>> 0;
  const lo = ((key[4]! << 24) | (key[5]! << 16) | (key[6]! << 8) | key[7]!) >>> 0;
  return (BigInt(hi) << 32n) | BigInt(lo);
}
