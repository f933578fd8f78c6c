import type { KvEvent } from './kv-event.js';
/** One event as TensorRT-LLM writes it (one item of the `/kv_cache_events` array). */
export declare function serializeKvEvent(event: KvEvent): string;
/** A whole `/kv_cache_events` response body. */
export declare function serializeKvEvents(events: readonly KvEvent[]): string;
/** Re-serves parsed items byte for byte (each `raw` is the exact source text of one array item). */
export declare function joinRawKvEvents(items: readonly {
    readonly raw: string;
}[]): string;
