import type { KvEvent } from './kv-event.js';
import type { WireIssue } from './wire-issue.js';
export interface ParsedKvEvent {
    readonly event: KvEvent;
    /**
     * exact source text of the array item. V8 keeps it as a slice of the input, so holding any `raw` keeps the
     * whole body alive: a long-lived buffer of raws should copy them (e.g. through a Buffer) or drop the body soon.
     */
    readonly raw: string;
    /** position of the item in the array */
    readonly index: number;
    /** offset of `raw` in the input */
    readonly offset: number;
}
export interface KvEventsParse {
    readonly events: ParsedKvEvent[];
    readonly issues: WireIssue[];
}
export interface ParseKvEventsOptions {
    /** at most this many bad-item issues are listed (a flood of bad items stays bounded); default 1000 */
    readonly maxItemIssues?: number;
}
/**
 * Parses a `/kv_cache_events` body. Never throws: every problem is an issue with a JSON path and an offset.
 * Beyond `maxItemIssues` bad items, one 'issues-suppressed' issue says how many more were skipped.
 */
export declare function parseKvEvents(text: string, options?: ParseKvEventsOptions): KvEventsParse;
