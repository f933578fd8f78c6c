// The tables the state keeps: worker truth, the router replica, the event-sequence trackers, and their shared bound.
export { U64HashSet } from './u64-hash-set.js';
export { WorkerTruthTable } from './worker-truth-table.js';
export { DEFAULT_MAX_TABLE_BLOCKS_PER_SERVER } from './table-bounds.js';
export { RouterReplicaTable } from './router-replica-table.js';
export { EventSequenceTracker } from './event-sequence-tracker.js';
