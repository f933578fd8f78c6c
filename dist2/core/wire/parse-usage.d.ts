import type { WireIssue } from './wire-issue.js';
export interface Usage {
    readonly promptTokens: number | null;
    readonly completionTokens: number | null;
    readonly totalTokens: number | null;
    /** null when the server did not report `prompt_tokens_details.cached_tokens` (not the same as 0) */
    readonly cachedTokens: number | null;
}
export interface UsageParse {
    /** null when the object carries no usage (most SSE chunks; `"usage":null`) or is not JSON */
    readonly value: Usage | null;
    readonly issues: WireIssue[];
}
/**
 * Usage of one JSON object text: a whole completion / chat response, or the data of one SSE chunk (without the
 * `data: ` prefix, which is also tolerated). The `[DONE]` sentinel reads as no usage, without an issue.
 */
export declare function parseUsage(text: string): UsageParse;
