// The request info of a CTX body already decoded to values (a msgpack body: TensorRT-LLM's orchestrator sends
// `msgspec.msgpack` of `request.model_dump(mode="json")` with `X-TRTLLM-Msgpack: 1`). Same reading as the JSON
// path (ctx-request.ts): the first prompt's ids, text or chat, prompt_token_ids written by the router, the
// disaggregated params and the conversation id. 64-bit integers arrive as bigint and stay exact.
import { headerCorrelationId, unreadableCtxRequest, type CtxRequestInfo, type HeaderBag } from './ctx-request.js';
import type { PromptForm, RequestUnreadableReason } from './request-unreadable.js';

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);
}

/** A list of uint32 ids (numbers or bigints) as a Uint32Array; null for anything else or an empty list. */
export function valueTokens(v: unknown): Uint32Array | null {
  if (!Array.isArray(v) || v.length === 0) return null;
  const out = new Uint32Array(v.length);
  for (let i = 0; i < v.length; i++) {
    const t: unknown = v[i];
    const n = typeof t === 'bigint' && t >= 0n && t <= 0xffff_ffffn ? Number(t) : t;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > 0xffff_ffff) return null;
    out[i] = n;
  }
  return out;
}

function idText(v: unknown): string | null {
  if (typeof v === 'string' && v !== '') return v;
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number' && Number.isSafeInteger(v)) return String(v);
  return null;
}

/** Never throws: a value that is not an object yields an unreadable info (headers still give the correlation id). */
export function ctxInfoFromValue(body: unknown, headers: HeaderBag): CtxRequestInfo {
  if (!isRecord(body)) return unreadableCtxRequest('malformed', headers);
  const disagg = isRecord(body['disaggregated_params']) ? body['disaggregated_params'] : {};
  const conv = isRecord(body['conversation_params']) ? body['conversation_params'] : {};
  let promptTokens: Uint32Array | null = null;
  let promptCount = 0;
  let promptForm: PromptForm | null = null;
  let unreadable: RequestUnreadableReason | null = null;
  if ('prompt' in body) {
    const prompt = body['prompt'];
    if (typeof prompt === 'string') {
      promptCount = 1;
      promptForm = 'text';
    } else if (Array.isArray(prompt) && prompt.length > 0) {
      const nested = Array.isArray(prompt[0]) || typeof prompt[0] === 'string';
      promptCount = nested ? prompt.length : 1;
      if (prompt.every((p) => typeof p === 'string')) promptForm = 'text';
      else {
        promptTokens = valueTokens(nested ? prompt[0] : prompt);
        if (promptTokens !== null) promptForm = 'token-ids';
        else unreadable = 'malformed';
      }
    } else unreadable = 'malformed';
  } else if ('messages' in body) {
    promptCount = 1;
    promptForm = Array.isArray(body['messages']) ? 'chat' : null;
    if (promptForm === null) unreadable = 'malformed';
  }
  if (promptTokens === null && 'prompt_token_ids' in body) {
    promptTokens = valueTokens(body['prompt_token_ids']);
    if (promptTokens !== null) {
      promptForm ??= 'token-ids';
      unreadable = null;
    }
  }
  if (promptForm === null && unreadable === null) unreadable = 'no_prompt';
  return {
    promptTokens,
    promptCount,
    disaggRequestId: idText(disagg['disagg_request_id']),
    requestType: typeof disagg['request_type'] === 'string' ? disagg['request_type'] : null,
    correlationId: idText(conv['conversation_id']) ?? idText(disagg['conversation_id']) ?? headerCorrelationId(headers),
    stream: body['stream'] === true,
    promptForm,
    unreadable,
  };
}
