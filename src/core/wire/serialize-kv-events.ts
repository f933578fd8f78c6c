// Domain events → TensorRT-LLM's compact `/kv_cache_events` JSON (docs/trtllm-wire.md §2.1): Starlette's
// `json.dumps(ensure_ascii=False, separators=(",",":"))`, keys in the serializer's insertion order.
// JSON.stringify escapes strings exactly like Python's ensure_ascii=False (\" \\ \b \f \n \r \t, other controls as
// lowercase \u00XX, everything else raw), so it is used for strings only; hashes are printed as unsigned decimal
// (bigint) or as the hex string.
// Nulls: `attention_dp_rank`, `hash_algo`, `layer_group_id` and `lora_id` are written only when non-null (TRT-LLM
// omits them); `event_id` and `window_size` are always written (as null when unknown), like every other field.
import type { EventDiff, KvEvent, KvEventData, StoredBlock, WireBlockHash } from './kv-event.js';

function hash(value: WireBlockHash | null): string {
  if (value === null) return 'null';
  return typeof value === 'bigint' ? value.toString() : JSON.stringify(value);
}

function nullable(value: number | null): string {
  return value === null ? 'null' : String(value);
}

function diff(value: EventDiff | null): string {
  if (value === null) return 'null';
  return `{"type":"event_diff","new_value":${nullable(value.newValue)},"old_value":${nullable(value.oldValue)}}`;
}

function tokens(block: StoredBlock): string {
  const ids = block.tokens;
  const extras = block.tokenExtraIds;
  let out = '[';
  for (let k = 0; k < ids.length; k++) {
    if (k > 0) out += ',';
    out += `{"type":"unique_token","token_id":${ids[k]},"token_extra_id":${extras === null ? 0 : (extras[k] ?? 0)}}`;
  }
  return out + ']';
}

function storedBlock(block: StoredBlock): string {
  let mm = '[';
  for (let k = 0; k < block.mmKeys.length; k++) {
    const key = block.mmKeys[k];
    if (key === undefined) continue;
    if (k > 0) mm += ',';
    mm += `{"type":"mm_key","hash":${JSON.stringify(key.hash)},"start_offset":${key.startOffset}}`;
  }
  mm += ']';
  const salt = block.cacheSalt === null ? 'null' : JSON.stringify(block.cacheSalt);
  const lora = block.loraId === null ? '' : `,"lora_id":${block.loraId.toString()}`;
  return (
    `{"type":"stored_block","block_hash":${hash(block.blockHash)},"tokens":${tokens(block)},` +
    `"cache_level":${block.cacheLevel},"priority":${nullable(block.priority)},"mm_keys":${mm},"cache_salt":${salt}${lora}}`
  );
}

function data(value: KvEventData): string {
  switch (value.type) {
    case 'created':
      return `{"type":"created","num_blocks_per_cache_level":[${value.numBlocksPerCacheLevel.join(',')}]}`;
    case 'stored':
      return `{"type":"stored","parent_hash":${hash(value.parentHash)},"blocks":[${value.blocks.map(storedBlock).join(',')}]}`;
    case 'removed':
      return `{"type":"removed","block_hashes":[${value.blockHashes.map(hash).join(',')}]}`;
    case 'updated':
      return (
        `{"type":"updated","block_hash":${hash(value.blockHash)},` +
        `"cache_level":${diff(value.cacheLevel)},"priority":${diff(value.priority)}}`
      );
    case 'all_cleared':
      return '{"type":"all_cleared"}';
  }
}

/** One event as TensorRT-LLM writes it (one item of the `/kv_cache_events` array). */
export function serializeKvEvent(event: KvEvent): string {
  let out = `{"event_id":${nullable(event.eventId)},"data":${data(event.data)},"window_size":${nullable(event.windowSize)}`;
  if (event.attentionDpRank !== null) out += `,"attention_dp_rank":${event.attentionDpRank}`;
  if (event.hashAlgo !== null) out += `,"hash_algo":"${event.hashAlgo}"`;
  if (event.layerGroupId !== null) out += `,"layer_group_id":${event.layerGroupId}`;
  return out + '}';
}

/** A whole `/kv_cache_events` response body. */
export function serializeKvEvents(events: readonly KvEvent[]): string {
  return `[${events.map(serializeKvEvent).join(',')}]`;
}

/** Re-serves parsed items byte for byte (each `raw` is the exact source text of one array item). */
export function joinRawKvEvents(items: readonly { readonly raw: string }[]): string {
  let out = '[';
  for (let k = 0; k < items.length; k++) out += (k > 0 ? ',' : '') + (items[k]?.raw ?? '');
  return out + ']';
}
