// Why the relay could not read a CTX request's prompt or ids (kvsentinel_relay_requests_unreadable_total{reason}).
// A blind relay is never silent: each such request is counted per server and reason and reaches the diagnosis.

export const REQUEST_UNREADABLE_REASONS = [
  /** a Content-Encoding (gzip …) or a body flag the relay cannot decode */
  'unknown_encoding',
  /** not a JSON / msgpack object, truncated, or a prompt that is neither ids, text nor messages */
  'malformed',
  /** the body was larger than relay.capture_max_bytes (forwarded whole, not read) */
  'too_large',
  /** a readable object with no prompt, prompt_token_ids or messages */
  'no_prompt',
] as const;

export type RequestUnreadableReason = (typeof REQUEST_UNREADABLE_REASONS)[number];

/** How the request carried its prompt: token ids, text (`prompt` strings) or chat `messages`. */
export const PROMPT_FORMS = ['token-ids', 'text', 'chat'] as const;
export type PromptForm = (typeof PROMPT_FORMS)[number];
