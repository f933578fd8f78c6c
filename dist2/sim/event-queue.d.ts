import type { KvEvent, KvEventData } from '../core/wire/kv-event.js';
export interface EventQueueOptions {
    /** attention-DP size; 1 = no attention DP (events carry no attention_dp_rank) */
    readonly ranks: number;
    /** event_buffer_max_size per rank; 0 = events disabled */
    readonly bufferMaxSize: number;
    /** kv_events_config publisher set: events go to the push path, the pull queue stays empty */
    readonly push: boolean;
    /** fault: the ADP gather loses every event of ranks ≠ 0 */
    readonly adpGatherDrop: boolean;
    /** attention_dp_events_gather_period_ms (default 5) */
    readonly gatherDelayMs: number;
    readonly windowSize: number;
}
export interface EventQueueStats {
    /** events created by the ranks' managers (ids consumed) */
    emitted: number;
    /** events lost: dropped oldest on overflow, or lost in the ADP gather */
    dropped: number;
    /** events returned by drains */
    drained: number;
    /** drains (POST /kv_cache_events) served */
    drains: number;
}
export declare class WorkerEventQueue {
    #private;
    readonly options: EventQueueOptions;
    readonly stats: EventQueueStats;
    constructor(options: EventQueueOptions);
    /** whether the pull path can ever return anything (else the worker need not build event objects) */
    get pullEnabled(): boolean;
    get capacity(): number;
    /** events waiting in rank 0's queue (after gathering up to `now`) */
    size(now: number): number;
    emit(rank: number, data: KvEventData, now: number): void;
    /** POST /kv_cache_events: everything queued, oldest first; the queue is empty afterwards */
    drain(now: number): KvEvent[];
    /** worker restart: a new manager, ids from 0, nothing queued */
    reset(): void;
}
