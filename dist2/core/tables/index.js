export { U64HashSet, u64HalvesView, U64_HI_OFFSET, U64_LO_OFFSET } from './u64-hash-set.js';
export { WorkerTruthTable, DEFAULT_EVENT_HASH_ALGO, } from './worker-truth-table.js';
export { RouterReplicaTable } from './router-replica-table.js';
export { EventSequenceTracker, } from './event-sequence-tracker.js';
//# sourceMappingURL=index.js.map