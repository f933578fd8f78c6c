import type { WireIssue } from './wire-issue.js';
import type { JsonObject } from './lossless-json.js';
import type { Path } from './json-fields.js';
import { FieldReader } from './json-fields.js';
export interface PerfTimingMetrics {
    readonly serverArrivalTime: number | null;
    readonly arrivalTime: number | null;
    readonly firstScheduledTime: number | null;
    readonly firstTokenTime: number | null;
    readonly serverFirstTokenTime: number | null;
    readonly lastTokenTime: number | null;
    readonly kvCacheSize: number | null;
    readonly kvCacheTransferStart: number | null;
    readonly kvCacheTransferEnd: number | null;
}
export interface PerfKvCacheMetrics {
    readonly numTotalAllocatedBlocks: number | null;
    readonly numNewAllocatedBlocks: number | null;
    readonly numReusedBlocks: number | null;
    readonly numMissedBlocks: number | null;
}
export interface WorkerPerfMetrics {
    readonly kind: 'worker';
    /** integer ids exact as bigint; some producers use strings */
    readonly requestId: bigint | string | null;
    readonly ctxRequestId: bigint | string | null;
    readonly firstIter: number | null;
    readonly lastIter: number | null;
    readonly timing: PerfTimingMetrics | null;
    readonly kvCache: PerfKvCacheMetrics | null;
    readonly serverArrivalTime: number | null;
    readonly serverFirstTokenTime: number | null;
    readonly raw: JsonObject;
}
export interface DisaggPerfMetrics {
    readonly kind: 'disagg';
    readonly ctxServer: string | null;
    readonly genServer: string | null;
    readonly disaggRequestId: bigint | string | null;
    readonly disaggServerArrivalTime: number | null;
    readonly disaggServerFirstTokenTime: number | null;
    /** null when the ctx side was not found (the join pops it; it may be gone) */
    readonly ctx: WorkerPerfMetrics | null;
    readonly gen: WorkerPerfMetrics | null;
    readonly raw: JsonObject;
}
export type PerfMetricsEntry = WorkerPerfMetrics | DisaggPerfMetrics;
export interface PerfMetricsParse {
    readonly value: PerfMetricsEntry[];
    readonly issues: WireIssue[];
}
/** reused / (reused + missed), or null when unknown or both are 0 (there is no hit-rate field on the wire). */
export declare function kvCacheHitRate(metrics: PerfKvCacheMetrics | null): number | null;
/** Parses one entry object (either form); `path` locates it for issues. */
export declare function readPerfMetricsEntry(read: FieldReader, o: JsonObject, path: Path): PerfMetricsEntry;
/** Parses a `/perf_metrics` body (worker or disaggregated server). Never throws. */
export declare function parsePerfMetrics(text: string): PerfMetricsParse;
