// Domain model of TensorRT-LLM `/kv_cache_events` items (trtllm-wire.md §2.1).
// Hashes are exact: unsigned 64-bit values as bigint, v2_sha256 keys as 64-char lowercase hex.
export const HASH_ALGOS = ['v1_block_key', 'v2_sha256', 'v2_sha256_64'];
export function isHashAlgo(value) {
    return typeof value === 'string' && HASH_ALGOS.includes(value);
}
//# sourceMappingURL=kv-event.js.map