// OpenAI `usage` of trtllm-serve completion / chat responses and of SSE chunks (docs/trtllm-wire.md §4).
// `prompt_tokens_details.cached_tokens` = prompt tokens served from the KV cache; in disaggregated serving the
// GEN response's usage is rewritten from the CTX response, so it is the client-visible signal of real hits.
import type { WireIssue, WireParse } from './wire-issue.js';
import { FieldReader, parseRootObject } from './json-fields.js';
import { internalIssue } from './json-path.js';

export interface Usage {
  readonly promptTokens: number | null;
  readonly completionTokens: number | null;
  readonly totalTokens: number | null;
  /** null when the server did not report `prompt_tokens_details.cached_tokens` (not the same as 0) */
  readonly cachedTokens: number | null;
}

/** The value is null when the object carries no usage (most SSE chunks; `"usage":null`) or is not JSON. */
export type UsageParse = WireParse<Usage | null>;

/**
 * Usage of one JSON object text: a whole completion / chat response, or the data of one SSE chunk (without the
 * `data: ` prefix, which is also tolerated). The `[DONE]` sentinel reads as no usage, without an issue.
 */
export function parseUsage(text: string): UsageParse {
  const issues: WireIssue[] = [];
  try {
    // tolerate a whole SSE line: `data: {…}` (the prefix is replaced by spaces so offsets stay those of `text`)
    const body = text.startsWith('data:') ? `     ${text.slice(5)}` : text;
    if (body.trim() === '[DONE]') return { value: null, issues };
    const root = parseRootObject(body, 'a completion response', issues);
    if (root === null) return { value: null, issues };
    const read = new FieldReader(body, issues);
    const usage = read.obj(root, 'usage', []);
    if (usage === null) return { value: null, issues };
    const details = read.obj(usage, 'prompt_tokens_details', ['usage']);
    return {
      value: {
        promptTokens: read.uint(usage, 'prompt_tokens', ['usage']),
        completionTokens: read.uint(usage, 'completion_tokens', ['usage']),
        totalTokens: read.uint(usage, 'total_tokens', ['usage']),
        cachedTokens: details === null ? null : read.uint(details, 'cached_tokens', ['usage', 'prompt_tokens_details']),
      },
      issues,
    };
  } catch (e) {
    return { value: null, issues: [...issues, internalIssue(e, null)] };
  }
}
