// Domain model of TensorRT-LLM `/kv_cache_events` items (docs/trtllm-wire.md §2.1).
// Hashes are exact: unsigned 64-bit values as bigint, v2_sha256 keys as 64-char lowercase hex.

export const HASH_ALGOS = ['v1_block_key', 'v2_sha256', 'v2_sha256_64'] as const;
export type HashAlgo = (typeof HASH_ALGOS)[number];

export function isHashAlgo(value: unknown): value is HashAlgo {
  return typeof value === 'string' && (HASH_ALGOS as readonly string[]).includes(value);
}

/** A block hash as it appears on the wire: u64 (v1_block_key, v2_sha256_64) or 32-byte hex (v2_sha256). */
export type WireBlockHash = bigint | string;

export interface EventDiff {
  readonly newValue: number | null;
  readonly oldValue: number | null;
}

export interface MmKey {
  readonly hash: string;
  readonly startOffset: number;
}

export interface StoredBlock {
  readonly blockHash: WireBlockHash;
  /** token ids of the block, in order */
  readonly tokens: Uint32Array;
  /** token_extra_id per token; null when all are 0 (the common case) */
  readonly tokenExtraIds: Uint32Array | null;
  readonly cacheLevel: number;
  readonly priority: number | null;
  readonly mmKeys: readonly MmKey[];
  readonly cacheSalt: string | null;
  /** lora_id when a build serializes it (none does yet); null otherwise */
  readonly loraId: bigint | null;
}

export type KvEventData =
  | { readonly type: 'created'; readonly numBlocksPerCacheLevel: readonly number[] }
  | { readonly type: 'stored'; readonly parentHash: WireBlockHash | null; readonly blocks: readonly StoredBlock[] }
  | {
      readonly type: 'removed';
      readonly blockHashes: readonly WireBlockHash[];
      /** with `residency`: the cache level the copies are removed from (one copy per hash); absent = every level */
      readonly cacheLevel?: number | null;
    }
  | {
      readonly type: 'updated';
      readonly blockHash: WireBlockHash;
      readonly cacheLevel: EventDiff | null;
      readonly priority: EventDiff | null;
    }
  | {
      readonly type: 'all_cleared';
      /** with `residency`: only this cache level is cleared (vLLM's GPU pool); absent = every level */
      readonly cacheLevel?: number | null;
    };

export type KvEventType = KvEventData['type'];

/**
 * Events of engines that store and remove each physical copy per medium (vLLM, SGLang streams): a stored block adds
 * one copy at its cache level, a removal takes one away at its `cacheLevel`, and a block is held while any copy is.
 * `hitLevel` is the slowest level a request reuses (0 = GPU only, the default; the `hit_tier` setting).
 */
export interface Residency {
  readonly hitLevel: number;
}

export interface KvEvent {
  /** per attention-DP rank counter from 0; null when the item had no id (flat form without event_id) */
  readonly eventId: number | null;
  readonly data: KvEventData;
  readonly windowSize: number | null;
  /** present only with attention DP; null means rank 0 of a non-ADP worker */
  readonly attentionDpRank: number | null;
  /** V2-manager events carry it; null means "not stated" (router default: v1_block_key) */
  readonly hashAlgo: HashAlgo | null;
  readonly layerGroupId: number | null;
  /** physical-copy semantics (Residency); absent on TensorRT-LLM's events, whose tables are sets */
  readonly residency?: Residency;
}
