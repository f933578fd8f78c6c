// The live HTTP driver of the simulator (`kvsentinel sim serve`, `kvsentinel demo`, integration tests).
export {
  startLiveCluster,
  type LiveCluster,
  type LiveClusterOptions,
  type LiveWorkerInfo,
  type StartWorkloadOptions,
} from './live-cluster.js';
export { LiveWorkload, type LiveTurnRecord, type LiveWorkloadSummary } from './live-workload.js';
export { LiveCtxWorker } from './live-ctx-worker.js';
export { LiveOrchestrator, type CtxTarget } from './live-orchestrator.js';
export { LiveScheduler } from './live-scheduler.js';
export { digestEvent, type EventDigest } from './event-digest.js';
