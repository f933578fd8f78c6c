// Re-keys blocks of engines whose hashes kvsentinel cannot recompute (vLLM's sha256/builtin families, SGLang): each
// stored block gets the key the V2 chain (v2_sha256_64) gives its tokens under its parent's key, so worker truth, the
// router replica and every decision's prompt keys share one hash space whatever the engine hashed with.
// The engine's own hash stays the block's identity: per rank, every engine hash with a copy resident (at any level)
// maps to its table key and its copies per level, so a removal finds exactly the block it names whatever happened
// since; a hash is forgotten when its last copy goes (no forever-blocks), and the map is bounded (its oldest entry is
// then dropped *and reported*, so the table drops it too). A block whose identity covers more than its tokens (vLLM
// extra_keys: LoRA name, multimodal ids, cache_salt, prompt embeddings; SGLang cache_salt and LoRA name) gets a
// scoped key no plain prompt chain reaches, so tenants never share keys. A block kvsentinel cannot chain (its parent
// was stored before it subscribed, its tokens are unreadable or absent) is still held, under a key derived from its
// engine hash: it counts as resident and its removal matches, though no prompt key can find it.
import { sha256 } from '@noble/hashes/sha2.js';
import { BlockSha256 } from '../hashing/block-sha256.js';
import { truncateKeyToU64, v2BlockKey, v2RootKey } from '../hashing/v2-sha256.js';
import { U64LruMap } from '../state/u64-lru-map.js';
import { ForgottenKeys } from './forgotten-keys.js';

/** Resident engine hashes remembered per rank: above a rank's GPU plus host block pools in the deployments we know. */
export const DEFAULT_REKEY_CAP = 524_288;
/**
 * Keys of hashes whose last copy went, remembered per rank (LRU) only to key a later store of the same hash: vLLM's
 * offloaded CPU copy is published when its transfer completes (without tokens), possibly after the GPU copy was
 * evicted. Never consulted for removals, so it cannot keep a block in the table.
 */
export const DEFAULT_FORGOTTEN_CAP = 131_072;
/** Copy counts per level are packed 8 bits a level, levels 0..3 (GPU, CPU, disk, other). */
const LEVELS = 4;

interface Resident {
  /** the full chained key (children chain on it); null when the block could not be chained */
  readonly chain: Uint8Array | null;
  readonly tableKey: bigint;
  /** copies per level, 8 bits each */
  copies: number;
}

export interface StoredInput {
  readonly parent: bigint | null;
  readonly hashes: readonly bigint[];
  /** each block's tokens; null or empty when the event carries none (vLLM's offloaded CPU copies) */
  readonly blocks: readonly (Uint32Array | null)[] | null;
  readonly loraId: bigint | null;
  /** per block, what besides its tokens the engine keyed it by (encoded), or null */
  readonly scopes: readonly (Uint8Array | null)[];
  readonly level: number;
}

export interface RekeyedBlocks {
  /** table keys, one per block */
  readonly keys: bigint[];
  readonly parentKey: bigint | null;
  /** blocks held under their engine hash's key: no prompt can find them */
  readonly unchained: number;
  /** entries the cap dropped: their copies must leave the table too */
  readonly dropped: readonly DroppedCopies[];
}

export interface DroppedCopies {
  readonly tableKey: bigint;
  /** copies per level */
  readonly copies: readonly number[];
}

// shifts, not powers of 256: every stored and removed block reads and writes its level's count (the packed counts
// stay below 2^32, where >>> reads a number exactly)
function copiesAt(packed: number, level: number): number {
  return (packed >>> (8 * level)) & 0xff;
}

/** one copy at `level`, in the packed counts */
const oneCopy = (level: number): number => 1 << (8 * level);

function unpack(packed: number): number[] {
  return Array.from({ length: LEVELS }, (_, l) => copiesAt(packed, l));
}

const ENGINE_KEY_TAG = new TextEncoder().encode('kvsentinel:engine-hash');

/** The table key of a block known only by its engine hash. */
function engineHashKey(hash: bigint): bigint {
  const bytes = new Uint8Array(ENGINE_KEY_TAG.length + 8);
  bytes.set(ENGINE_KEY_TAG, 0);
  new DataView(bytes.buffer).setBigUint64(ENGINE_KEY_TAG.length, hash, false);
  return truncateKeyToU64(sha256(bytes));
}

function scoped(key: Uint8Array, scope: Uint8Array | null): Uint8Array {
  if (scope === null) return key;
  const bytes = new Uint8Array(key.length + scope.length);
  bytes.set(key, 0);
  bytes.set(scope, key.length);
  return sha256(bytes);
}

export class StreamRekeyer {
  readonly #cap: number;
  readonly #ranks = new Map<number, U64LruMap<Resident>>();
  readonly #forgotten = new Map<number, ForgottenKeys>();
  readonly #forgottenCap: number;
  readonly #hasher = new BlockSha256();
  #plainRoot: Uint8Array | null = null;
  #evicted = 0;

  constructor(cap = DEFAULT_REKEY_CAP, forgottenCap = DEFAULT_FORGOTTEN_CAP) {
    this.#cap = cap;
    this.#forgottenCap = forgottenCap;
  }

  /** resident engine hashes dropped by the cap (lost removals left them behind) */
  get evicted(): number {
    return this.#evicted;
  }

  /** engine hashes held for a rank (each has a copy resident somewhere) */
  size(rank: number): number {
    return this.#ranks.get(rank)?.size ?? 0;
  }

  /** Keys the blocks of one stored event and records one copy each at `input.level`. */
  stored(rank: number, input: StoredInput): RekeyedBlocks {
    const map = this.#map(rank);
    const parentEntry = input.parent === null ? undefined : map.get(input.parent);
    let chain: Uint8Array | null = input.parent === null ? this.#rootKey(input.loraId) : (parentEntry?.chain ?? null);
    const parentKey = input.parent === null ? null : (parentEntry?.tableKey ?? engineHashKey(input.parent));
    const keys: bigint[] = [];
    const dropped: DroppedCopies[] = [];
    let unchained = 0;
    for (let i = 0; i < input.hashes.length; i++) {
      const hash = input.hashes[i]!;
      const tokens = input.blocks?.[i] ?? null;
      // a resident hash keeps its key
      let entry = map.get(hash);
      if (entry === undefined) {
        if (tokens !== null && tokens.length > 0 && chain !== null) {
          const next = scoped(v2BlockKey(chain, tokens, 0, tokens.length, this.#hasher), input.scopes[i] ?? null);
          entry = { chain: next, tableKey: truncateKeyToU64(next), copies: 0 };
        } else {
          // a forgotten key is asked for only by a store that cannot key itself (the tokenless offloaded copy): one
          // that can gets the key its tokens give under its parent, as it did the first time
          entry = this.#revive(rank, hash) ?? { chain: null, tableKey: engineHashKey(hash), copies: 0 };
        }
      }
      if (entry.chain === null) unchained++;
      if (copiesAt(entry.copies, input.level) < 255) entry.copies += oneCopy(input.level);
      const out = map.set(hash, entry);
      if (out !== undefined) {
        this.#evicted++;
        dropped.push({ tableKey: out[1].tableKey, copies: unpack(out[1].copies) });
      }
      keys.push(entry.tableKey);
      chain = entry.chain;
    }
    return { keys, parentKey, unchained, dropped };
  }

  /** One copy of `hash` leaves `level`: its table key, or null when no copy of it is known there. */
  removed(rank: number, hash: bigint, level: number): bigint | null {
    const map = this.#ranks.get(rank);
    const entry = map?.peek(hash);
    if (map === undefined || entry === undefined || copiesAt(entry.copies, level) === 0) return null;
    entry.copies -= oneCopy(level);
    if (entry.copies === 0) this.#forget(rank, map, hash, entry);
    return entry.tableKey;
  }

  /** Every copy at `level` is gone (vLLM's GPU AllBlocksCleared); hashes with no copy left are forgotten. */
  clearLevel(rank: number, level: number): void {
    const map = this.#ranks.get(rank);
    if (map === undefined) return;
    const gone: bigint[] = [];
    for (const [hash, entry] of map.entries()) {
      entry.copies -= copiesAt(entry.copies, level) * oneCopy(level);
      if (entry.copies === 0) gone.push(hash);
    }
    for (const hash of gone) this.#forget(rank, map, hash, map.peek(hash)!);
  }

  /** The table key of an engine hash with a copy resident, or null. */
  keyOf(rank: number, hash: bigint): bigint | null {
    return this.#ranks.get(rank)?.peek(hash)?.tableKey ?? null;
  }

  /** A rank's publisher restarted or cleared its whole cache: its old hashes mean nothing now. */
  resetRank(rank: number): void {
    this.#ranks.delete(rank);
    this.#forgotten.delete(rank);
  }

  #forget(rank: number, map: U64LruMap<Resident>, hash: bigint, entry: Resident): void {
    map.delete(hash);
    let forgotten = this.#forgotten.get(rank);
    if (forgotten === undefined) {
      forgotten = new ForgottenKeys(this.#forgottenCap);
      this.#forgotten.set(rank, forgotten);
    }
    forgotten.remember(hash, entry.chain, entry.tableKey);
  }

  /** A hash stored again after its last copy went: its old key, with no copies. */
  #revive(rank: number, hash: bigint): Resident | undefined {
    const old = this.#forgotten.get(rank)?.take(hash);
    if (old === undefined) return undefined;
    return { chain: old.chain, tableKey: old.tableKey, copies: 0 };
  }

  /** the chain's root for a LoRA id (one SHA-256 each, kept: nearly every stored event of a stream asks) */
  #rootKey(loraId: bigint | null): Uint8Array {
    if (loraId === null) return (this.#plainRoot ??= v2RootKey({ loraId: null }));
    return v2RootKey({ loraId });
  }

  #map(rank: number): U64LruMap<Resident> {
    let map = this.#ranks.get(rank);
    if (map === undefined) {
      map = new U64LruMap(this.#cap);
      this.#ranks.set(rank, map);
    }
    return map;
  }
}
