// `GET /perf_metrics` (docs/trtllm-wire.md §4, §5): a worker answers entries
// `{request_id, perf_metrics:{first_iter, last_iter, timing_metrics{…}, kv_cache_metrics{…}}, ctx_request_id?, …}`;
// the disaggregated server joins ctx and gen entries into
// `{ctx_server, gen_server, disagg_server_arrival_time, disagg_server_first_token_time, ctx_perf_metrics, gen_perf_metrics}`.
// Both forms may come in one array; an entry that is not an object is skipped with an issue.
import type { WireIssue, WireParse } from './wire-issue.js';
import type { JsonObject } from './lossless-json.js';
import { isJsonObject, parseLosslessJson } from './lossless-json.js';
import type { Path } from './json-fields.js';
import { FieldReader, describeJson } from './json-fields.js';
import { internalIssue } from './json-path.js';

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

export type PerfMetricsParse = WireParse<PerfMetricsEntry[]>;

/** reused / (reused + missed), or null when unknown or both are 0 (there is no hit-rate field on the wire). */
export function kvCacheHitRate(metrics: PerfKvCacheMetrics | null): number | null {
  if (metrics === null || metrics.numReusedBlocks === null || metrics.numMissedBlocks === null) return null;
  const total = metrics.numReusedBlocks + metrics.numMissedBlocks;
  return total === 0 ? null : metrics.numReusedBlocks / total;
}

/** the camelCase field of each wire key, in wire order (the order issues are reported in) */
const TIMING_FIELDS = {
  serverArrivalTime: 'server_arrival_time',
  arrivalTime: 'arrival_time',
  firstScheduledTime: 'first_scheduled_time',
  firstTokenTime: 'first_token_time',
  serverFirstTokenTime: 'server_first_token_time',
  lastTokenTime: 'last_token_time',
  kvCacheSize: 'kv_cache_size',
  kvCacheTransferStart: 'kv_cache_transfer_start',
  kvCacheTransferEnd: 'kv_cache_transfer_end',
} as const satisfies Record<keyof PerfTimingMetrics, string>;

const KV_FIELDS = {
  numTotalAllocatedBlocks: 'num_total_allocated_blocks',
  numNewAllocatedBlocks: 'num_new_allocated_blocks',
  numReusedBlocks: 'num_reused_blocks',
  numMissedBlocks: 'num_missed_blocks',
} as const satisfies Record<keyof PerfKvCacheMetrics, string>;

/** each field of `fields` read by `readOne` from its wire key */
function readFields<K extends string>(
  fields: Record<K, string>,
  readOne: (wireKey: string) => number | null,
): Record<K, number | null> {
  const out = {} as Record<K, number | null>;
  for (const key of Object.keys(fields) as K[]) out[key] = readOne(fields[key]);
  return out;
}

function readTiming(read: FieldReader, o: JsonObject, path: Path): PerfTimingMetrics {
  return readFields(TIMING_FIELDS, (key) => read.num(o, key, path));
}

function readKv(read: FieldReader, o: JsonObject, path: Path): PerfKvCacheMetrics {
  return readFields(KV_FIELDS, (key) => read.uint(o, key, path));
}

function readWorker(read: FieldReader, o: JsonObject, path: Path): WorkerPerfMetrics {
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

function isDisagg(o: JsonObject): boolean {
  return 'ctx_perf_metrics' in o || 'gen_perf_metrics' in o || 'ctx_server' in o || 'gen_server' in o;
}

/** Parses one entry object (either form); `path` locates it for issues. */
export function readPerfMetricsEntry(read: FieldReader, o: JsonObject, path: Path): PerfMetricsEntry {
  if (!isDisagg(o)) return readWorker(read, o, path);
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
export function parsePerfMetrics(text: string): PerfMetricsParse {
  const issues: WireIssue[] = [];
  const value: PerfMetricsEntry[] = [];
  try {
    const parsed = parseLosslessJson(text);
    issues.push(...parsed.issues);
    if (parsed.value === undefined) return { value, issues };
    const read = new FieldReader(text, issues);
    if (!Array.isArray(parsed.value)) {
      issues.push({
        code: 'not-an-array',
        message: `/perf_metrics must be a JSON array, found ${describeJson(parsed.value)}`,
        path: '$',
        offset: 0,
      });
      return { value, issues };
    }
    parsed.value.forEach((entry, index) => {
      if (isJsonObject(entry)) value.push(readPerfMetricsEntry(read, entry, [index]));
      else read.issue('wrong-type', `a /perf_metrics entry must be an object, found ${describeJson(entry)}`, [index]);
    });
    return { value, issues };
  } catch (e) {
    return { value, issues: [...issues, internalIssue(e, null)] };
  }
}
