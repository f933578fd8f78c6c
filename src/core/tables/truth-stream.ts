// One event stream of worker truth (server, attention_dp_rank, window_size, hash_algo, layer_group_id): the blocks
// it holds with their cache level (0 = GPU, 1 = host) in the set's payload byte, and its anomaly counters.
import { blockKey64 } from '../hashing/block-key.js';
import type { HashAlgo, WireBlockHash } from '../wire/kv-event.js';
import type { TierCopies } from './tier-copies.js';
import { U64HashSet } from './u64-hash-set.js';

/** Algorithm of events that do not state one: V1 C++ managers always emit v1 keys without the field. */
export const DEFAULT_EVENT_HASH_ALGO: HashAlgo = 'v1_block_key';
/** Cache levels above this share one payload value (no build emits more than 0 and 1). */
export const MAX_LEVEL = 255;

export interface TruthStreamKey {
  readonly server: string;
  /** null on the wire (no attention DP) is rank 0 */
  readonly attentionDpRank: number;
  readonly windowSize: number | null;
  /** the event's hash_algo, or DEFAULT_EVENT_HASH_ALGO when it stated none */
  readonly hashAlgo: HashAlgo;
  readonly layerGroupId: number | null;
}

export interface TruthStreamStats extends TruthStreamKey {
  readonly blocks: number;
  /** blocks held per cache level (index = level); with copies a block held on GPU and CPU counts at both */
  readonly blocksPerLevel: readonly number[];
  /** from the last `created` event; null when none was seen */
  readonly capacityPerLevel: readonly number[] | null;
  /** `stored` of a block the stream already held */
  readonly storedAgain: number;
  /** `removed` of a block the stream did not hold (a missed `stored`, or a table built mid-stream) */
  readonly removedUnknown: number;
  /** `updated` cache-level change of a block the stream did not hold */
  readonly updatedUnknown: number;
}

export interface TruthStream {
  readonly key: TruthStreamKey;
  /** every held block, its payload the lowest cache level holding it */
  readonly blocks: U64HashSet;
  /** physical copies per level, for streams whose events carry `residency` (vLLM, SGLang); null: a set */
  readonly copies: TierCopies | null;
  /** the slowest level a request reuses (MAX_LEVEL for set streams: every level, as before) */
  readonly hitLevel: number;
  blocksPerLevel: number[];
  capacityPerLevel: readonly number[] | null;
  storedAgain: number;
  removedUnknown: number;
  updatedUnknown: number;
}

export function eventKeys(blocks: readonly { readonly blockHash: WireBlockHash }[]): U64HashSet {
  const set = new U64HashSet(blocks.length);
  for (const b of blocks) set.add(blockKey64(b.blockHash));
  return set;
}

export function levelOf(cacheLevel: number): number {
  if (!Number.isInteger(cacheLevel) || cacheLevel < 0) return 0;
  return Math.min(cacheLevel, MAX_LEVEL);
}

export function streamId(rank: number, windowSize: number | null, algo: HashAlgo, layerGroupId: number | null): string {
  return `${rank}|${String(windowSize)}|${algo}|${String(layerGroupId)}`;
}

export function bumpLevel(stream: TruthStream, level: number, delta: number): void {
  while (stream.blocksPerLevel.length <= level) stream.blocksPerLevel.push(0);
  stream.blocksPerLevel[level] = (stream.blocksPerLevel[level] ?? 0) + delta;
}

export function compareIds(a: TruthStream, b: TruthStream): number {
  const x = streamId(a.key.attentionDpRank, a.key.windowSize, a.key.hashAlgo, a.key.layerGroupId);
  const y = streamId(b.key.attentionDpRank, b.key.windowSize, b.key.hashAlgo, b.key.layerGroupId);
  return x < y ? -1 : x > y ? 1 : 0;
}
