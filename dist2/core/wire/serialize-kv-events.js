function hash(value) {
    if (value === null)
        return 'null';
    return typeof value === 'bigint' ? value.toString() : JSON.stringify(value);
}
function nullable(value) {
    return value === null ? 'null' : String(value);
}
function diff(value) {
    if (value === null)
        return 'null';
    return `{"type":"event_diff","new_value":${nullable(value.newValue)},"old_value":${nullable(value.oldValue)}}`;
}
function tokens(block) {
    const ids = block.tokens;
    const extras = block.tokenExtraIds;
    let out = '[';
    for (let k = 0; k < ids.length; k++) {
        if (k > 0)
            out += ',';
        out += `{"type":"unique_token","token_id":${ids[k]},"token_extra_id":${extras === null ? 0 : (extras[k] ?? 0)}}`;
    }
    return out + ']';
}
function storedBlock(block) {
    let mm = '[';
    for (let k = 0; k < block.mmKeys.length; k++) {
        const key = block.mmKeys[k];
        if (key === undefined)
            continue;
        if (k > 0)
            mm += ',';
        mm += `{"type":"mm_key","hash":${JSON.stringify(key.hash)},"start_offset":${key.startOffset}}`;
    }
    mm += ']';
    const salt = block.cacheSalt === null ? 'null' : JSON.stringify(block.cacheSalt);
    const lora = block.loraId === null ? '' : `,"lora_id":${block.loraId.toString()}`;
    return (`{"type":"stored_block","block_hash":${hash(block.blockHash)},"tokens":${tokens(block)},` +
        `"cache_level":${block.cacheLevel},"priority":${nullable(block.priority)},"mm_keys":${mm},"cache_salt":${salt}${lora}}`);
}
function data(value) {
    switch (value.type) {
        case 'created':
            return `{"type":"created","num_blocks_per_cache_level":[${value.numBlocksPerCacheLevel.join(',')}]}`;
        case 'stored':
            return `{"type":"stored","parent_hash":${hash(value.parentHash)},"blocks":[${value.blocks.map(storedBlock).join(',')}]}`;
        case 'removed':
            return `{"type":"removed","block_hashes":[${value.blockHashes.map(hash).join(',')}]}`;
        case 'updated':
            return (`{"type":"updated","block_hash":${hash(value.blockHash)},` +
                `"cache_level":${diff(value.cacheLevel)},"priority":${diff(value.priority)}}`);
        case 'all_cleared':
            return '{"type":"all_cleared"}';
    }
}
/** One event as TensorRT-LLM writes it (one item of the `/kv_cache_events` array). */
export function serializeKvEvent(event) {
    let out = `{"event_id":${nullable(event.eventId)},"data":${data(event.data)},"window_size":${nullable(event.windowSize)}`;
    if (event.attentionDpRank !== null)
        out += `,"attention_dp_rank":${event.attentionDpRank}`;
    if (event.hashAlgo !== null)
        out += `,"hash_algo":"${event.hashAlgo}"`;
    if (event.layerGroupId !== null)
        out += `,"layer_group_id":${event.layerGroupId}`;
    return out + '}';
}
/** A whole `/kv_cache_events` response body. */
export function serializeKvEvents(events) {
    return `[${events.map(serializeKvEvent).join(',')}]`;
}
/** Re-serves parsed items byte for byte (each `raw` is the exact source text of one array item). */
export function joinRawKvEvents(items) {
    let out = '[';
    for (let k = 0; k < items.length; k++)
        out += (k > 0 ? ',' : '') + (items[k]?.raw ?? '');
    return out + ']';
}
//# sourceMappingURL=serialize-kv-events.js.map