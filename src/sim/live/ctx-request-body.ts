// The orchestrator's side of a context_only exchange (docs/trtllm-wire.md §5): the request it sends to a CTX server
// (the client's body with stream off and disaggregated_params set, kept byte for byte where it can be) and the one
// field it reads back from the answer, ctx_request_id.
import { encode } from '@msgpack/msgpack';
import { isJsonObject, parseLosslessJson, type JsonValue } from '../../core/wire/lossless-json.js';
import { JsonScanner } from '../../core/wire/json-scanner.js';
import { utf8Of } from '../../core/wire/wire-input.js';
import type { RouterConfig } from '../sim-config.js';
import type { OpenAiRequest } from './openai-request.js';

const CTX_OVERRIDDEN_KEYS: readonly string[] = ['stream', 'stream_options', 'disaggregated_params'];
const PROMPT_ID_KEYS: readonly string[] = ['prompt_token_ids', 'prompt_token_ids_b64'];

/**
 * The raw text of every top-level member of a JSON object whose key is not in `drop`, in order; null when the text is
 * not a plain object (the caller then re-serializes). Keeps numbers exactly as sent: `-0`, `1.0` and integers past
 * 2^53 would change under JSON.parse + JSON.stringify.
 */
function rawMembersExcept(text: string, drop: readonly string[]): string[] | null {
  const s = new JsonScanner(utf8Of(text));
  const b = s.bytes;
  try {
    const kept: string[] = [];
    let i = s.skipWs(0);
    if (b[i] !== 123) return null;
    i = s.skipWs(i + 1);
    if (b[i] === 125) return s.skipWs(i + 1) === s.length ? kept : null;
    for (;;) {
      if (b[i] !== 34) return null;
      const start = i;
      const keyEnd = s.scanString(i);
      const key = s.decodeString(i, keyEnd);
      i = s.skipWs(keyEnd);
      if (b[i] !== 58) return null;
      const end = s.skipValue(s.skipWs(i + 1));
      if (!drop.includes(key)) kept.push(s.text(start, end));
      i = s.skipWs(end);
      const c = b[i];
      if (c === 125) return s.skipWs(i + 1) === s.length ? kept : null;
      if (c !== 44) return null;
      i = s.skipWs(i + 1);
    }
  } catch {
    return null;
  }
}

/**
 * The context_only request: the client's body with stream off and disaggregated_params set. When the client sent
 * none of those keys, the raw text is extended in place (no re-serialization of a long prompt); otherwise those keys
 * are cut out of the raw text, so every other member still reaches the server byte for byte.
 */
export function ctxBody(request: OpenAiRequest, rawBody: string, disaggregatedParams: string): string {
  const end = rawBody.lastIndexOf('}');
  const untouched = CTX_OVERRIDDEN_KEYS.every((k) => !(k in request.body));
  if (end > 0 && untouched && (request.promptJson !== null || Object.keys(request.body).length > 0)) {
    return `${rawBody.slice(0, end)},"stream":false,"disaggregated_params":${disaggregatedParams}}`;
  }
  const members = rawMembersExcept(rawBody, CTX_OVERRIDDEN_KEYS);
  if (members !== null)
    return `{${[...members, '"stream":false', `"disaggregated_params":${disaggregatedParams}`].join(',')}}`;
  const body: Record<string, unknown> = { ...request.body, stream: false };
  delete body['stream_options'];
  const prompt = request.promptJson === null ? '' : `"prompt":${request.promptJson},`;
  return `{${prompt}${JSON.stringify(body).slice(1, -1)},"disaggregated_params":${disaggregatedParams}}`;
}

/** The context_only request as a value (for msgpack): the client's body, stream off, the disaggregated params. */
function ctxObject(
  request: OpenAiRequest,
  disaggregatedParams: Record<string, unknown>,
  routerTokens: Uint32Array | null,
): Record<string, unknown> {
  const body: Record<string, unknown> = { ...request.body, stream: false, disaggregated_params: disaggregatedParams };
  delete body['stream_options'];
  if (request.promptJson !== null) body['prompt'] = JSON.parse(request.promptJson) as unknown;
  if (routerTokens !== null) body['prompt_token_ids'] = Array.from(routerTokens);
  return body;
}

/**
 * The context_only request the orchestrator sends to a CTX server, as router.ctx_body says: JSON (X-Request-ID and
 * X-Correlation-ID forwarded, as older clients do) or msgspec msgpack (the newest client: Content-Type still
 * application/json, no X-Correlation-ID); disaggregated_params carry the conversation id either way.
 */
export function contextOnlyRequest(
  r: RouterConfig,
  request: OpenAiRequest,
  rawBody: string,
  ids: { readonly disaggId: number; readonly requestId: string; readonly routerTokens: Uint32Array | null },
): { payload: string | Uint8Array; headers: Record<string, string> } {
  const { disaggId, requestId, routerTokens } = ids;
  const disaggParams = {
    request_type: 'context_only',
    disagg_request_id: disaggId,
    schedule_style: null,
    ...(request.conversationId !== null ? { conversation_id: request.conversationId } : {}),
    ...(r.returnPromptTokenIdsB64 ? { return_prompt_token_ids_b64: true } : {}),
  };
  if (r.ctxBody === 'msgpack') {
    return {
      payload: encode(ctxObject(request, disaggParams, routerTokens)),
      headers: { 'content-type': 'application/json', 'x-trtllm-msgpack': '1' },
    };
  }
  const written = routerTokens === null ? '' : `,"prompt_token_ids":[${Array.from(routerTokens).join(',')}]`;
  const json = ctxBody(request, rawBody, JSON.stringify(disaggParams));
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-request-id': requestId };
  if (request.correlationHeader !== null) headers['x-correlation-id'] = request.correlationHeader;
  return { payload: written === '' ? json : `${json.slice(0, -1)}${written}}`, headers };
}

/**
 * A context_only answer without the prompt's ids (tens of thousands of integers the orchestrator never reads): the
 * text its usage and ctx_request_id are parsed from, at a fraction of the cost of parsing the whole answer.
 */
export function withoutPromptIds(text: string): string {
  const members = rawMembersExcept(text, PROMPT_ID_KEYS);
  return members === null ? text : `{${members.join(',')}}`;
}

/** choices[0].disaggregated_params.ctx_request_id of a context_only answer (pass it through withoutPromptIds) */
export function ctxRequestIdOf(text: string): string | null {
  const root = parseLosslessJson(text).value;
  if (!isJsonObject(root)) return null;
  const choices = root['choices'];
  const first: JsonValue | undefined = Array.isArray(choices) ? choices[0] : undefined;
  const params = isJsonObject(first) ? first['disaggregated_params'] : undefined;
  const id = isJsonObject(params) ? params['ctx_request_id'] : undefined;
  return typeof id === 'bigint' || typeof id === 'string' ? String(id) : null;
}
