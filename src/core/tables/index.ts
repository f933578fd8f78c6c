export { U64HashSet, u64HalvesView, U64_HI_OFFSET, U64_LO_OFFSET } from './u64-hash-set.js';
export {
  WorkerTruthTable,
  DEFAULT_EVENT_HASH_ALGO,
  DEFAULT_MAX_TABLE_BLOCKS_PER_SERVER,
  type TableBounds,
  type TruthStreamKey,
  type TruthStreamStats,
  type TruthApplyResult,
  type TruthMatchOptions,
  type TruthPrefixMatch,
} from './worker-truth-table.js';
export { RouterReplicaTable, type ReplicaApplyResult, type ReplicaServerStats } from './router-replica-table.js';
export {
  EventSequenceTracker,
  type SequenceKind,
  type SequenceObservation,
  type RankSequenceStats,
} from './event-sequence-tracker.js';
