import type { HashAlgo, KvEvent } from '../core/wire/kv-event.js';
import { WorkerEventQueue } from './event-queue.js';
import { RankCache } from './kv-cache.js';
import type { Prompt } from './prompt.js';
import type { Scheduler } from './scheduler.js';
export type RankAssignment = 'affinity' | 'least_loaded';
export interface CtxWorkerConfig {
    readonly id: string;
    /** attention-DP size */
    readonly ranks: number;
    /** worker tokens_per_block */
    readonly blockSize: number;
    readonly gpuBlocksPerRank: number;
    readonly hostBlocksPerRank: number;
    /** prefills running at once on the server; the rest queue */
    readonly maxConcurrency: number;
    /** prefill throughput of one running request, tokens per second */
    readonly prefillTokensPerSecond: number;
    readonly overheadMs: number;
    readonly rankAssignment: RankAssignment;
    /** effective kv_cache_event_hash_algo (what /server_info reports) */
    readonly hashAlgo: HashAlgo;
    readonly eventBufferMaxSize: number;
    readonly kvEventsPush: boolean;
    readonly adpGatherDrop: boolean;
    readonly gatherPeriodMs: number;
    readonly windowSize: number;
    /** how long a restart keeps the server down */
    readonly restartDowntimeMs: number;
}
export interface CtxRequest {
    readonly requestId: string;
    readonly correlationId: string | null;
    readonly prompt: Prompt;
}
export interface CtxResult {
    readonly requestId: string;
    readonly ok: boolean;
    readonly error: string | null;
    readonly promptTokens: number;
    /** reused prompt tokens (whole blocks), usage.prompt_tokens_details.cached_tokens */
    readonly cachedTokens: number;
    readonly rank: number;
    readonly arrivedAt: number;
    readonly startedAt: number;
    readonly finishedAt: number;
}
/** /server_info of a newer worker */
export interface ServerInfo {
    readonly disaggregated_params: {
        readonly disaggregated_mode: string;
    };
    readonly kv_cache_hash_algo: HashAlgo;
    readonly tokens_per_block: number;
}
export declare class WorkerDownError extends Error {
    readonly name = "WorkerDownError";
}
export interface CtxWorkerStats {
    requests: number;
    failed: number;
    promptTokens: number;
    cachedTokens: number;
    restarts: number;
}
export declare class CtxWorker {
    #private;
    readonly config: CtxWorkerConfig;
    readonly events: WorkerEventQueue;
    readonly stats: CtxWorkerStats;
    constructor(scheduler: Scheduler, config: CtxWorkerConfig);
    get id(): string;
    /** requests queued or running on the server */
    get inflight(): number;
    get running(): number;
    isUp(): boolean;
    rankCache(rank: number): RankCache;
    serverInfo(): ServerInfo;
    /** POST /kv_cache_events: destructive; throws WorkerDownError while the server restarts */
    drainEvents(): KvEvent[];
    /** a context_only request; `done` runs when the prefill finishes (or fails) */
    submit(request: CtxRequest, done: (result: CtxResult) => void): void;
    /**
     * no new prefill starts for `durationMs` (KV-transfer backpressure from GEN, a hiccup): requests keep
     * arriving and queue; the server still answers /kv_cache_events
     */
    stall(durationMs: number): void;
    /** crash and come back after restartDowntimeMs: caches and event ids start over; in-flight requests fail */
    restart(): void;
}
