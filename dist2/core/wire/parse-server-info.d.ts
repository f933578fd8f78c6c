import type { HashAlgo } from './kv-event.js';
import type { WireIssue } from './wire-issue.js';
import type { JsonObject, JsonValue } from './lossless-json.js';
export interface ServerInfo {
    /** effective event hash algorithm; null when the build does not state it (then: v1_block_key) */
    readonly kvCacheHashAlgo: HashAlgo | null;
    /** the raw value (lossless tree), null when absent */
    readonly disaggregatedParams: JsonValue | null;
    readonly tokensPerBlock: number | null;
    readonly renderFingerprint: string | null;
    /** some builds and mocks add it; the router's load score divides by it */
    readonly maxBatchSize: number | null;
    /** the whole document, for fields this parser does not name */
    readonly raw: JsonObject;
}
export interface ServerInfoParse {
    /** null when the body is not a JSON object */
    readonly value: ServerInfo | null;
    readonly issues: WireIssue[];
}
export declare function parseServerInfo(text: string): ServerInfoParse;
