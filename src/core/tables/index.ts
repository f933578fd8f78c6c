export { U64HashSet, u64HalvesView, U64_HI_OFFSET, U64_LO_OFFSET } from './u64-hash-set.js';
export { WorkerTruthTable, type TruthApplyResult } from './worker-truth-table.js';
export { DEFAULT_EVENT_HASH_ALGO, type TruthStreamKey, type TruthStreamStats } from './truth-stream.js';
export type { TruthMatchOptions, TruthPrefixMatch } from './truth-prefix-match.js';
export { DEFAULT_MAX_TABLE_BLOCKS_PER_SERVER, type TableBounds } from './table-bounds.js';
export { RouterReplicaTable, type ReplicaApplyResult, type ReplicaServerStats } from './router-replica-table.js';
export {
  EventSequenceTracker,
  type SequenceKind,
  type SequenceObservation,
  type RankSequenceStats,
} from './event-sequence-tracker.js';
