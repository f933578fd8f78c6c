// `GET /server_info` of a trtllm-serve worker (docs/trtllm-wire.md §4): older builds answer only
// `{"disaggregated_params": …}`, newer ones add the effective `kv_cache_hash_algo`; router code also reads
// `tokens_per_block` and `render_fingerprint`. Every field is optional; a wrong one is an issue and reads as null.
import type { HashAlgo } from './kv-event.js';
import { isHashAlgo } from './kv-event.js';
import type { WireIssue, WireParse } from './wire-issue.js';
import type { JsonObject, JsonValue } from './lossless-json.js';
import { FieldReader, parseRootObject } from './json-fields.js';
import { internalIssue } from './json-path.js';

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

/** The value is null when the body is not a JSON object. */
export type ServerInfoParse = WireParse<ServerInfo | null>;

export function parseServerInfo(text: string): ServerInfoParse {
  const issues: WireIssue[] = [];
  try {
    const root = parseRootObject(text, '/server_info', issues);
    if (root === null) return { value: null, issues };
    const read = new FieldReader(text, issues);
    let algo: HashAlgo | null = null;
    const rawAlgo = read.str(root, 'kv_cache_hash_algo', []);
    if (rawAlgo !== null) {
      if (isHashAlgo(rawAlgo)) algo = rawAlgo;
      else
        read.issue('unknown-hash-algo', `kv_cache_hash_algo ${JSON.stringify(rawAlgo)} is not a known algorithm`, [
          'kv_cache_hash_algo',
        ]);
    }
    const tokensPerBlock = read.uint(root, 'tokens_per_block', []);
    if (tokensPerBlock === 0)
      read.issue('number-out-of-range', 'tokens_per_block must be at least 1', ['tokens_per_block']);
    return {
      value: {
        kvCacheHashAlgo: algo,
        disaggregatedParams: root['disaggregated_params'] ?? null,
        tokensPerBlock: tokensPerBlock === 0 ? null : tokensPerBlock,
        renderFingerprint: read.str(root, 'render_fingerprint', []),
        maxBatchSize: read.uint(root, 'max_batch_size', []),
        raw: root,
      },
      issues,
    };
  } catch (e) {
    return { value: null, issues: [...issues, internalIssue(e, null)] };
  }
}
