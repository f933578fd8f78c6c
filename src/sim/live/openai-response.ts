// OpenAI-compatible response bodies as trtllm-serve writes them: a completion / chat completion with
// `usage.prompt_tokens_details.cached_tokens`, context_only responses with `disaggregated_params`, and SSE chunks
// whose final chunk carries the usage.
import type { OpenAiEndpoint } from './openai-request.js';

export interface UsageNumbers {
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly cachedTokens: number;
}

export interface ResponseHead {
  readonly endpoint: OpenAiEndpoint;
  readonly id: string;
  readonly created: number;
  readonly model: string;
}

export function usageObject(u: UsageNumbers): Record<string, unknown> {
  return {
    prompt_tokens: u.promptTokens,
    total_tokens: u.promptTokens + u.completionTokens,
    completion_tokens: u.completionTokens,
    prompt_tokens_details: { cached_tokens: u.cachedTokens },
  };
}

/** a generated text of `count` tokens (the simulator does not model content) */
export function fillerText(count: number): string {
  return ' tok'.repeat(Math.max(count, 0));
}

/** `extraMembers`: JSON text of more top-level members (the base64 form of the prompt's ids), or '' */
export function responseBody(
  head: ResponseHead,
  text: string,
  usage: UsageNumbers,
  disaggregatedParams: Record<string, unknown> | null,
  promptTokenIds: Uint32Array | null = null,
  extraMembers = '',
): string {
  const choice: Record<string, unknown> =
    head.endpoint === 'completions'
      ? { index: 0, text, logprobs: null, finish_reason: 'length', stop_reason: null }
      : {
          index: 0,
          message: { role: 'assistant', content: text, reasoning_content: null, tool_calls: [] },
          logprobs: null,
          finish_reason: 'length',
          stop_reason: null,
        };
  if (disaggregatedParams !== null) choice['disaggregated_params'] = disaggregatedParams;
  const json = JSON.stringify({
    id: head.id,
    object: head.endpoint === 'completions' ? 'text_completion' : 'chat.completion',
    created: head.created,
    model: head.model,
    choices: [choice],
    usage: usageObject(usage),
    // the worker's own token ids of the prompt (context-only responses, "to remove the tokenization in the generation server")
    ...(promptTokenIds !== null ? { prompt_token_ids: Array.from(promptTokenIds) } : {}),
  });
  return extraMembers === '' ? json : `${json.slice(0, -1)},${extraMembers}}`;
}

/** one SSE chunk's JSON; `usage` only on the final chunk */
export function chunkBody(
  head: ResponseHead,
  text: string,
  finishReason: string | null,
  usage: UsageNumbers | null,
): string {
  const choice =
    head.endpoint === 'completions'
      ? { index: 0, text, logprobs: null, finish_reason: finishReason, stop_reason: null }
      : {
          index: 0,
          delta: finishReason === null ? { role: 'assistant', content: text } : { content: text },
          logprobs: null,
          finish_reason: finishReason,
          stop_reason: null,
        };
  return JSON.stringify({
    id: head.id,
    object: head.endpoint === 'completions' ? 'text_completion' : 'chat.completion.chunk',
    created: head.created,
    model: head.model,
    choices: [choice],
    usage: usage === null ? null : usageObject(usage),
  });
}
