export {
  HASH_ALGOS,
  isHashAlgo,
  type HashAlgo,
  type WireBlockHash,
  type EventDiff,
  type MmKey,
  type StoredBlock,
  type KvEventData,
  type KvEventType,
  type KvEvent,
} from './kv-event.js';
export type { WireIssue } from './wire-issue.js';
export { parseTokenList, type TokenListResult } from './token-list.js';
export { parseKvEvents, type KvEventsParse, type ParsedKvEvent, type ParseKvEventsOptions } from './parse-kv-events.js';
export { serializeKvEvent, serializeKvEvents, joinRawKvEvents } from './serialize-kv-events.js';
export { WIRE_ISSUE_CODES, type WireIssueCode } from './wire-issue-codes.js';
export {
  parseLosslessJson,
  isJsonObject,
  isJsonInteger,
  jsonToNumber,
  jsonToSafeInteger,
  type JsonValue,
  type JsonObject,
  type LosslessJsonParse,
} from './lossless-json.js';
export { parseServerInfo, type ServerInfo, type ServerInfoParse } from './parse-server-info.js';
export { parseUsage, type Usage, type UsageParse } from './parse-usage.js';
export {
  parsePerfMetrics,
  readPerfMetricsEntry,
  kvCacheHitRate,
  type PerfMetricsParse,
  type PerfMetricsEntry,
  type WorkerPerfMetrics,
  type DisaggPerfMetrics,
  type PerfTimingMetrics,
  type PerfKvCacheMetrics,
} from './parse-perf-metrics.js';
export { FieldReader } from './json-fields.js';
