// Re-keys blocks of engines whose hashes kvsentinel cannot recompute (vLLM's sha256/builtin families, SGLang):
// each stored block gets the key the V2 chain (v2_sha256_64) gives its tokens under its parent's key, so worker
// truth, the router replica and every decision's prompt keys share one hash space whatever the engine hashed with.
// The engine hash → chained key map is per rank and bounded (LRU); a block whose parent was never seen (stored
// before kvsentinel subscribed, or evicted from the map) cannot be chained and is counted as unresolved.
import { truncateKeyToU64, v2BlockKey, v2RootKey } from '../hashing/v2-sha256.js';
import { LruMap } from '../state/lru-map.js';

/** Engine hashes remembered per rank: above a rank's GPU plus host block pools in the deployments we know. */
export const DEFAULT_REKEY_CAP = 262_144;

export interface RekeyedBlocks {
  /** chained keys, one per block, or null when the parent was unknown */
  readonly keys: bigint[] | null;
  readonly parentKey: bigint | null;
}

export class StreamRekeyer {
  readonly #cap: number;
  readonly #ranks = new Map<number, LruMap<bigint, Uint8Array>>();
  #evicted = 0;

  constructor(cap = DEFAULT_REKEY_CAP) {
    this.#cap = cap;
  }

  /** engine hashes dropped by the cap (their children then cannot be chained) */
  get evicted(): number {
    let n = this.#evicted;
    for (const m of this.#ranks.values()) n += m.dropped;
    return n;
  }

  /** Chains the blocks of one stored event; `blocks` are the tokens of each block, in order. */
  stored(
    rank: number,
    parent: bigint | null,
    hashes: readonly bigint[],
    blocks: readonly Uint32Array[],
    loraId: bigint | null,
  ): RekeyedBlocks {
    const map = this.#map(rank);
    let key = parent === null ? v2RootKey({ loraId }) : map.get(parent);
    if (key === undefined) return { keys: null, parentKey: null };
    const parentKey = parent === null ? null : truncateKeyToU64(key);
    const keys: bigint[] = [];
    for (let i = 0; i < hashes.length; i++) {
      key = v2BlockKey(key, blocks[i]!);
      map.set(hashes[i]!, key);
      keys.push(truncateKeyToU64(key));
    }
    return { keys, parentKey };
  }

  /** The chained key of an engine hash, or null when it was never stored (or was evicted). */
  keyOf(rank: number, hash: bigint): bigint | null {
    const key = this.#map(rank).peek(hash);
    return key === undefined ? null : truncateKeyToU64(key);
  }

  /** A rank's publisher restarted or cleared its cache: its old hashes mean nothing now. */
  resetRank(rank: number): void {
    const map = this.#ranks.get(rank);
    if (map !== undefined) this.#evicted += map.dropped;
    this.#ranks.delete(rank);
  }

  #map(rank: number): LruMap<bigint, Uint8Array> {
    let map = this.#ranks.get(rank);
    if (map === undefined) {
      map = new LruMap(this.#cap);
      this.#ranks.set(rank, map);
    }
    return map;
  }
}
