import { isHashAlgo } from './kv-event.js';
import { FieldReader, parseRootObject } from './json-fields.js';
import { internalIssue } from './json-scan.js';
export function parseServerInfo(text) {
    const issues = [];
    try {
        const root = parseRootObject(text, '/server_info', issues);
        if (root === null)
            return { value: null, issues };
        const read = new FieldReader(text, issues);
        let algo = null;
        const rawAlgo = read.str(root, 'kv_cache_hash_algo', []);
        if (rawAlgo !== null) {
            if (isHashAlgo(rawAlgo))
                algo = rawAlgo;
            else
                read.issue('unknown-hash-algo', `kv_cache_hash_algo ${JSON.stringify(rawAlgo)} is not a known algorithm`, ['kv_cache_hash_algo']);
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
    }
    catch (e) {
        return { value: null, issues: [...issues, internalIssue(e, null)] };
    }
}
//# sourceMappingURL=parse-server-info.js.map