// The live HTTP driver of the simulator (`kvsentinel sim serve`, `kvsentinel demo`, integration tests).
export { startLiveCluster, type LiveCluster, type LiveWorkerInfo } from './live-cluster.js';
export { LiveWorkload, type LiveWorkloadSummary } from './live-workload.js';
export { LiveOrchestrator } from './live-orchestrator.js';
export { LiveScheduler } from './live-scheduler.js';
export type { EventDigest } from './event-digest.js';
