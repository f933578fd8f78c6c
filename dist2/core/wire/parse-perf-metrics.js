import { isJsonObject, parseLosslessJson } from './lossless-json.js';
import { FieldReader, describeJson } from './json-fields.js';
import { internalIssue } from './json-scan.js';
/** reused / (reused + missed), or null when unknown or both are 0 (there is no hit-rate field on the wire). */
export function kvCacheHitRate(metrics) {
    if (metrics === null || metrics.numReusedBlocks === null || metrics.numMissedBlocks === null)
        return null;
    const total = metrics.numReusedBlocks + metrics.numMissedBlocks;
    return total === 0 ? null : metrics.numReusedBlocks / total;
}
function readTiming(read, o, path) {
    return {
        serverArrivalTime: read.num(o, 'server_arrival_time', path),
        arrivalTime: read.num(o, 'arrival_time', path),
        firstScheduledTime: read.num(o, 'first_scheduled_time', path),
        firstTokenTime: read.num(o, 'first_token_time', path),
        serverFirstTokenTime: read.num(o, 'server_first_token_time', path),
        lastTokenTime: read.num(o, 'last_token_time', path),
        kvCacheSize: read.num(o, 'kv_cache_size', path),
        kvCacheTransferStart: read.num(o, 'kv_cache_transfer_start', path),
        kvCacheTransferEnd: read.num(o, 'kv_cache_transfer_end', path),
    };
}
function readKv(read, o, path) {
    return {
        numTotalAllocatedBlocks: read.uint(o, 'num_total_allocated_blocks', path),
        numNewAllocatedBlocks: read.uint(o, 'num_new_allocated_blocks', path),
        numReusedBlocks: read.uint(o, 'num_reused_blocks', path),
        numMissedBlocks: read.uint(o, 'num_missed_blocks', path),
    };
}
function readWorker(read, o, path) {
    const pm = read.obj(o, 'perf_metrics', path);
    const pmPath = [...path, 'perf_metrics'];
    const timing = pm === null ? null : read.obj(pm, 'timing_metrics', pmPath);
    const kv = pm === null ? null : read.obj(pm, 'kv_cache_metrics', pmPath);
    return {
        kind: 'worker',
        requestId: read.id(o, 'request_id', path),
        ctxRequestId: read.id(o, 'ctx_request_id', path),
        firstIter: pm === null ? null : read.uint(pm, 'first_iter', pmPath),
        lastIter: pm === null ? null : read.uint(pm, 'last_iter', pmPath),
        timing: timing === null ? null : readTiming(read, timing, [...pmPath, 'timing_metrics']),
        kvCache: kv === null ? null : readKv(read, kv, [...pmPath, 'kv_cache_metrics']),
        serverArrivalTime: read.num(o, 'server_arrival_time', path),
        serverFirstTokenTime: read.num(o, 'server_first_token_time', path),
        raw: o,
    };
}
function isDisagg(o) {
    return 'ctx_perf_metrics' in o || 'gen_perf_metrics' in o || 'ctx_server' in o || 'gen_server' in o;
}
/** Parses one entry object (either form); `path` locates it for issues. */
export function readPerfMetricsEntry(read, o, path) {
    if (!isDisagg(o))
        return readWorker(read, o, path);
    const ctx = read.obj(o, 'ctx_perf_metrics', path);
    const gen = read.obj(o, 'gen_perf_metrics', path);
    return {
        kind: 'disagg',
        ctxServer: read.str(o, 'ctx_server', path),
        genServer: read.str(o, 'gen_server', path),
        disaggRequestId: read.id(o, 'disagg_request_id', path),
        disaggServerArrivalTime: read.num(o, 'disagg_server_arrival_time', path),
        disaggServerFirstTokenTime: read.num(o, 'disagg_server_first_token_time', path),
        ctx: ctx === null ? null : readWorker(read, ctx, [...path, 'ctx_perf_metrics']),
        gen: gen === null ? null : readWorker(read, gen, [...path, 'gen_perf_metrics']),
        raw: o,
    };
}
/** Parses a `/perf_metrics` body (worker or disaggregated server). Never throws. */
export function parsePerfMetrics(text) {
    const issues = [];
    const value = [];
    try {
        const parsed = parseLosslessJson(text);
        issues.push(...parsed.issues);
        if (parsed.value === undefined)
            return { value, issues };
        const read = new FieldReader(text, issues);
        if (!Array.isArray(parsed.value)) {
            issues.push({ code: 'not-an-array', message: `/perf_metrics must be a JSON array, found ${describeJson(parsed.value)}`, path: '$', offset: 0 });
            return { value, issues };
        }
        parsed.value.forEach((entry, index) => {
            if (isJsonObject(entry))
                value.push(readPerfMetricsEntry(read, entry, [index]));
            else
                read.issue('wrong-type', `a /perf_metrics entry must be an object, found ${describeJson(entry)}`, [index]);
        });
        return { value, issues };
    }
    catch (e) {
        return { value, issues: [...issues, internalIssue(e, null)] };
    }
}
//# sourceMappingURL=parse-perf-metrics.js.map