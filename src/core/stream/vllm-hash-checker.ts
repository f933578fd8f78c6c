// Recomputes the block hashes a vLLM worker publishes (docs/event-streams.md "vLLM block hashes") when the
// deployment hashes with sha256_cbor. What makes a block checkable:
//   - its parent: the root's is NONE_HASH, known only when PYTHONHASHSEED is (else os.urandom); a child's is on the
//     wire in full for bytes hashes, and for int hashes (VLLM_KV_EVENTS_USE_INT_BLOCK_HASHES, low 64 bits only) it is
//     the full hash kvsentinel computed for that parent (a chain from a known root);
//   - its extra keys: newer vLLM publishes them per block (LoRA name, cache_salt, multimodal ids, prompt-embeds
//     hashes); older vLLM does not, so a miss there may be a key the stream never showed;
//   - the hashing granularity: with hash_block_size (prefix_match_unit, hybrid groups) below block_size the published
//     hash is the last (or the concatenation) of finer chained hashes; a miss is retried at each divisor of the block.
// A miss is a mismatch only when all three were known; every other miss is unverifiable, never a mismatch, because a
// hash-mismatch finding pages.
import {
  vllmBlockHash,
  vllmIntBlockHash,
  vllmNoneHash,
  vllmHashRecomputable,
  type VllmExtraKey,
  type VllmHashAlgo,
} from '../hashing/vllm-block-hash.js';
import type { HashCheck } from '../state/hash-verifier.js';
import { U64LruMap } from '../state/u64-lru-map.js';
import type { StreamStored } from './decode-batch.js';

/** What the operator told kvsentinel about the deployment's hashing (`--zmq …,hash=sha256_cbor,seed=0`). */
export interface VllmHashing {
  /** --prefix-caching-hash-algo, null when not stated (vLLM's default is sha256, a pickle: not recomputable) */
  readonly algo: VllmHashAlgo | null;
  /** the workers' PYTHONHASHSEED, null when unset or not stated (root blocks are then unverifiable) */
  readonly seed: string | null;
}

const HASH_BYTES = 32;
/** full hashes remembered per rank for int-hash deployments (children of a block we computed) */
const DEFAULT_FULL_CAP = 262_144;
/** misses searched at every divisor before one granularity was seen to match (bounds the cost of a wrong algorithm) */
const MAX_BLIND_SEARCHES = 64;

/** How blocks of one size are hashed on one rank (KV cache groups may differ in block size). */
interface Granularity {
  /** the sub-block size that last reproduced a hash whose granularity was not the block's */
  finer: number | null;
  /** some block reproduced at its own size: whole blocks are hashed */
  wholeBlocks: boolean;
  blindSearches: number;
}

interface RankState {
  readonly full: U64LruMap<Uint8Array>;
  readonly bySize: Map<number, Granularity>;
}

function last32(bytes: Uint8Array): Uint8Array {
  return bytes.subarray(bytes.length - HASH_BYTES);
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function divisorsBelow(n: number): number[] {
  const out: number[] = [];
  for (let d = n - 1; d >= 1; d--) if (n % d === 0) out.push(d);
  return out;
}

/** A miss can only be called a mismatch when the granularity the hash was made at is known to be the one tried. */
function granularityKnown(g: Granularity, extra: VllmExtraKey | null): boolean {
  // blocks without extra keys were tried at every divisor; with extra keys only whole blocks can be recomputed
  return extra === null ? g.wholeBlocks || g.finer !== null : g.wholeBlocks && g.finer === null;
}

export class VllmHashChecker {
  readonly #hashing: VllmHashing;
  readonly #noneHash: Uint8Array | null;
  readonly #ranks = new Map<number, RankState>();
  readonly #fullCap: number;

  constructor(hashing: VllmHashing, fullCap = DEFAULT_FULL_CAP) {
    this.#hashing = hashing;
    this.#noneHash = vllmHashRecomputable(hashing.algo) && hashing.seed !== null ? vllmNoneHash(hashing.seed) : null;
    this.#fullCap = fullCap;
  }

  get hashing(): VllmHashing {
    return this.#hashing;
  }

  /** A rank restarted or cleared its cache: its hashes (and a new seed, if any) start over. */
  resetRank(rank: number): void {
    this.#ranks.delete(rank);
  }

  /** One check per block of a stored event; `blocks` are each block's tokens. */
  check(rank: number, event: StreamStored, blocks: readonly Uint32Array[]): HashCheck[] {
    if (!vllmHashRecomputable(this.#hashing.algo)) return blocks.map(() => 'unverifiable');
    const state = this.#rank(rank);
    const checks: HashCheck[] = [];
    let parent: Uint8Array | undefined = this.#rootParent(state, event);
    for (let i = 0; i < blocks.length; i++) {
      const wireBytes = event.blockHashBytes?.[i] ?? null;
      const extra = event.blockExtraKeys === null ? null : (event.blockExtraKeys[i] ?? null);
      const known = event.blockExtraKeys !== null;
      let computed: Uint8Array | null = null;
      if (
        parent === undefined ||
        blocks[i]!.length === 0 ||
        (wireBytes !== null && (wireBytes.length === 0 || wireBytes.length % HASH_BYTES !== 0))
      ) {
        checks.push('unverifiable');
      } else {
        const g = this.#granularity(state, blocks[i]!.length);
        computed = this.#reproduce(g, parent, blocks[i]!, extra, event.blockHashes[i]!, wireBytes);
        if (computed !== null) checks.push('match');
        else checks.push(known && granularityKnown(g, extra) ? 'mismatch' : 'unverifiable');
      }
      // the next block chains to this one's published hash when it is on the wire in full, else to what we computed
      if (wireBytes !== null && wireBytes.length >= HASH_BYTES && wireBytes.length % HASH_BYTES === 0)
        parent = last32(wireBytes);
      else if (computed !== null) {
        state.full.set(event.blockHashes[i]!, computed);
        parent = computed;
      } else parent = undefined;
    }
    return checks;
  }

  #rootParent(state: RankState, event: StreamStored): Uint8Array | undefined {
    if (event.parentHash === null) return this.#noneHash ?? undefined;
    const bytes = event.parentHashBytes;
    if (bytes !== null)
      return bytes.length >= HASH_BYTES && bytes.length % HASH_BYTES === 0 ? last32(bytes) : undefined;
    return state.full.get(event.parentHash);
  }

  /** The block's last chained 32-byte hash when some granularity reproduces what was published, else null. */
  #reproduce(
    g: Granularity,
    parent: Uint8Array,
    tokens: Uint32Array,
    extra: VllmExtraKey | null,
    wire: bigint,
    wireBytes: Uint8Array | null,
  ): Uint8Array | null {
    const pieces = wireBytes === null ? 1 : wireBytes.length / HASH_BYTES;
    const n = tokens.length;
    if (pieces > 1) {
      // older vLLM concatenated the finer hashes (AB for two 16-token hashes of a 32-token block)
      if (n % pieces !== 0 || extra !== null) return null;
      const chain = this.#chain(parent, tokens, n / pieces);
      const ok = chain.every((h, k) => equalBytes(h, wireBytes!.subarray(k * HASH_BYTES, (k + 1) * HASH_BYTES)));
      if (ok) g.finer = n / pieces;
      return ok ? chain[chain.length - 1]! : null;
    }
    const matches = (h: Uint8Array): boolean =>
      wireBytes === null ? vllmIntBlockHash(h) === wire : equalBytes(h, wireBytes);
    const whole = vllmBlockHash(parent, tokens, extra);
    if (matches(whole)) {
      g.wholeBlocks = true;
      return whole;
    }
    if (extra !== null) return null;
    // newer vLLM publishes the last finer hash, which already chains over the whole block
    const tried = new Set<number>();
    const attempt = (d: number): Uint8Array | null => {
      tried.add(d);
      const chain = this.#chain(parent, tokens, d);
      const lastHash = chain[chain.length - 1]!;
      if (!matches(lastHash)) return null;
      g.finer = d;
      return lastHash;
    };
    if (g.finer !== null && g.finer < n && n % g.finer === 0) {
      const hit = attempt(g.finer);
      if (hit !== null) return hit;
    }
    if (g.wholeBlocks && g.finer === null) return null;
    if (g.finer === null && g.blindSearches >= MAX_BLIND_SEARCHES) return null;
    if (g.finer === null) g.blindSearches++;
    for (const d of divisorsBelow(n)) {
      if (tried.has(d)) continue;
      const hit = attempt(d);
      if (hit !== null) return hit;
    }
    return null;
  }

  /** The finer hashes of a block without extra keys (its sub-blocks have none either). */
  #chain(parent: Uint8Array, tokens: Uint32Array, size: number): Uint8Array[] {
    const out: Uint8Array[] = [];
    let p = parent;
    for (let start = 0; start < tokens.length; start += size) {
      p = vllmBlockHash(p, tokens.subarray(start, start + size));
      out.push(p);
    }
    return out;
  }

  #granularity(state: RankState, size: number): Granularity {
    let g = state.bySize.get(size);
    if (g === undefined) {
      g = { finer: null, wholeBlocks: false, blindSearches: 0 };
      if (state.bySize.size < 64) state.bySize.set(size, g);
    }
    return g;
  }

  #rank(rank: number): RankState {
    let state = this.#ranks.get(rank);
    if (state === undefined) {
      state = { full: new U64LruMap(this.#fullCap), bySize: new Map() };
      this.#ranks.set(rank, state);
    }
    return state;
  }
}
