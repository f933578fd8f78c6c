// vLLM's prefix-cache block hashes (vllm/v1/core/kv_cache_utils.py `hash_block_tokens`, docs/event-streams.md
// "vLLM block hashes"): hash(block) = hash_fn((parent hash bytes, tuple(token ids), extra_keys or None)), the root's
// parent being NONE_HASH = hash_fn(PYTHONHASHSEED as a str) — or os.urandom(32) when PYTHONHASHSEED is unset. Only
// `sha256_cbor` (SHA-256 over cbor2's canonical encoding) is reproducible outside Python: `sha256` and `xxhash`
// hash a pickle, `xxhash_cbor` needs xxh3-128, `builtin` (older vLLM) is Python's per-process hash().
// CBOR: canonical = every head in its shortest form, definite lengths. The block tuple is written here directly
// (array of 3, byte string, array of unsigned ints, null: ~10× faster than a generic encoder, and blocks are hashed
// at the workers' prefill rate); extra keys and the seed go through npm `cbor2`, which writes integers, byte strings,
// text strings, arrays and null the way Python cbor2's canonical=True does (test/vectors/vllm-block-hash.json).
import { sha256 } from '@noble/hashes/sha2.js';
import { encode } from 'cbor2';
import { KvsentinelError } from '../errors.js';

/** `--prefix-caching-hash-algo` values across vLLM versions (builtin: before sha256 became the default). */
export const VLLM_HASH_ALGOS = ['sha256', 'sha256_cbor', 'xxhash', 'xxhash_cbor', 'builtin'] as const;
export type VllmHashAlgo = (typeof VLLM_HASH_ALGOS)[number];

export function isVllmHashAlgo(value: unknown): value is VllmHashAlgo {
  return typeof value === 'string' && (VLLM_HASH_ALGOS as readonly string[]).includes(value);
}

/** The algorithms kvsentinel recomputes. */
export function vllmHashRecomputable(algo: VllmHashAlgo | null): algo is 'sha256_cbor' {
  return algo === 'sha256_cbor';
}

/**
 * One extra_keys entry as it came off the wire (msgpack decoded): text (LoRA name, cache_salt, multimodal identifier),
 * bytes (prompt-embeds hash), integers (offsets, may be negative), arrays (tuples), null.
 */
export type VllmExtraKey = string | number | bigint | Uint8Array | null | readonly VllmExtraKey[];

/** Is this value made only of what the encoder reproduces exactly? (floats are not: msgpack loses 1.0 vs 1) */
export function isVllmExtraKey(value: unknown): value is VllmExtraKey {
  if (value === null || typeof value === 'string' || typeof value === 'bigint' || value instanceof Uint8Array)
    return true;
  if (typeof value === 'number') return Number.isSafeInteger(value);
  return Array.isArray(value) && value.every(isVllmExtraKey);
}

/**
 * A plain Uint8Array over the same bytes: a subclass (Node's Buffer, as ZMQ frames and msgpack's bin views are) has
 * toJSON, which the CBOR encoder would follow and write a map instead of a byte string.
 */
function plain(bytes: Uint8Array): Uint8Array {
  return Object.getPrototypeOf(bytes) === Uint8Array.prototype
    ? bytes
    : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function plainExtra(key: VllmExtraKey | null): VllmExtraKey | null {
  if (key instanceof Uint8Array) return plain(key);
  return Array.isArray(key) ? (key as readonly VllmExtraKey[]).map(plainExtra) : key;
}

/** sha256_cbor(x) = SHA-256(cbor2.dumps(x, canonical=True)). */
function sha256Cbor(value: unknown): Uint8Array {
  return sha256(encode(value));
}

/** NONE_HASH for a deployment started with PYTHONHASHSEED=`seed` (the env string, hashed as a str). */
export function vllmNoneHash(seed: string): Uint8Array {
  return sha256Cbor(seed);
}

/** Bytes of a CBOR head (major type, argument) in its shortest form. */
function headLength(argument: number): number {
  return argument < 24 ? 1 : argument < 0x100 ? 2 : argument < 0x1_0000 ? 3 : argument <= 0xffff_ffff ? 5 : 9;
}

function writeHead(out: Uint8Array, at: number, major: number, argument: number): number {
  const m = major << 5;
  if (argument < 24) {
    out[at] = m | argument;
    return at + 1;
  }
  if (argument < 0x100) {
    out[at] = m | 24;
    out[at + 1] = argument;
    return at + 2;
  }
  if (argument < 0x1_0000) {
    out[at] = m | 25;
    out[at + 1] = argument >>> 8;
    out[at + 2] = argument & 0xff;
    return at + 3;
  }
  out[at] = m | 26;
  out[at + 1] = argument >>> 24;
  out[at + 2] = (argument >>> 16) & 0xff;
  out[at + 3] = (argument >>> 8) & 0xff;
  out[at + 4] = argument & 0xff;
  return at + 5;
}

const CBOR_NULL = Uint8Array.of(0xf6);

/** The CBOR bytes sha256_cbor hashes for one block: [parent bytes, [token ids], extra_keys or null]. */
export function vllmBlockHashInput(
  parent: Uint8Array,
  tokens: ArrayLike<number>,
  extraKeys: VllmExtraKey | null,
): Uint8Array {
  const extra = extraKeys === null ? CBOR_NULL : encode(plainExtra(extraKeys));
  let size = 1 + headLength(parent.length) + parent.length + headLength(tokens.length) + extra.length;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (!Number.isInteger(t) || t < 0 || t > 0xffff_ffff)
      throw new KvsentinelError('internal', `token id ${t} is not 0..2^32-1`);
    size += headLength(t);
  }
  const out = new Uint8Array(size);
  let at = writeHead(out, 0, 4, 3);
  at = writeHead(out, at, 2, parent.length);
  out.set(parent, at);
  at += parent.length;
  at = writeHead(out, at, 4, tokens.length);
  for (let i = 0; i < tokens.length; i++) at = writeHead(out, at, 0, tokens[i]!);
  out.set(extra, at);
  return out;
}

/** hash_block_tokens(sha256_cbor, parent, tokens, extra_keys); the root's parent is NONE_HASH. */
export function vllmBlockHash(
  parent: Uint8Array,
  tokens: ArrayLike<number>,
  extraKeys: VllmExtraKey | null = null,
): Uint8Array {
  return sha256(vllmBlockHashInput(parent, tokens, extraKeys));
}

/** What VLLM_KV_EVENTS_USE_INT_BLOCK_HASHES publishes: int.from_bytes(hash, 'big') & (2^64 − 1). */
export function vllmIntBlockHash(hash: Uint8Array): bigint {
  let out = 0n;
  for (let i = Math.max(0, hash.length - 8); i < hash.length; i++) out = (out << 8n) | BigInt(hash[i]!);
  return out;
}
