export { HASH_ALGOS, isHashAlgo, } from './kv-event.js';
export { parseTokenList } from './token-list.js';
export { parseKvEvents } from './parse-kv-events.js';
export { serializeKvEvent, serializeKvEvents, joinRawKvEvents } from './serialize-kv-events.js';
export { WIRE_ISSUE_CODES } from './wire-issue-codes.js';
export { parseLosslessJson, isJsonObject, isJsonInteger, jsonToNumber, jsonToSafeInteger, } from './lossless-json.js';
export { parseServerInfo } from './parse-server-info.js';
export { parseUsage } from './parse-usage.js';
export { parsePerfMetrics, readPerfMetricsEntry, kvCacheHitRate, } from './parse-perf-metrics.js';
export { FieldReader } from './json-fields.js';
//# sourceMappingURL=index.js.map