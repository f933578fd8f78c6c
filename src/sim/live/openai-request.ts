// What the simulated servers read from an OpenAI `/v1/completions` or `/v1/chat/completions` body: the prompt as
// token ids (`prompt` token ids, or text / chat messages rendered to code points, the same on every server so the
// router and the workers agree), streaming, max_tokens, the disaggregated params and the conversation id.
// Bodies carry no 64-bit hashes, so JSON.parse is safe here; every rejection names the field and position. A body
// flagged `X-TRTLLM-Msgpack: 1` is msgpack (TensorRT-LLM's worker decodes exactly those with msgspec); a chat body
// with `prompt_token_ids` (written by the router) is served from those ids, as the worker does.
import type { IncomingHttpHeaders } from 'node:http';
import { decode } from '@msgpack/msgpack';
import { JsonScanner } from '../../core/wire/json-scanner.js';
import { CharOffsets, utf8Of } from '../../core/wire/wire-input.js';
import { HttpError } from './http-kit.js';

export type OpenAiEndpoint = 'completions' | 'chat';

export interface OpenAiRequest {
  readonly endpoint: OpenAiEndpoint;
  /** the body without `prompt` (see promptJson) */
  readonly body: Record<string, unknown>;
  /** completions: the `prompt` value as JSON text (exactly as sent when it was read fast); chat: null */
  readonly promptJson: string | null;
  readonly tokens: Uint32Array;
  readonly stream: boolean;
  readonly maxTokens: number | null;
  readonly model: string;
  /** disaggregated_params.request_type === 'context_only' */
  readonly contextOnly: boolean;
  /** body conversation_params / disaggregated_params conversation_id, else the first affinity header */
  readonly conversationId: string | null;
  /** X-Correlation-ID as sent (forwarded to CTX servers) */
  readonly correlationHeader: string | null;
  /** disaggregated_params.return_prompt_token_ids_b64: answer prompt_token_ids_b64 instead of the list (chat) */
  readonly returnPromptTokenIdsB64: boolean;
}

const MAX_TOKEN_ID = 0xffff_ffff;
const AFFINITY_HEADERS = ['x-session-id', 'x-correlation-id', 'x-session-affinity', 'x-multi-turn-session-id'] as const;

function bad(message: string): HttpError {
  return new HttpError(400, message);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function codePoints(text: string): Uint32Array {
  const out: number[] = [];
  for (const ch of text) out.push(ch.codePointAt(0)!);
  return Uint32Array.from(out);
}

function tokenArray(list: readonly unknown[], field: string): Uint32Array {
  const tokens = new Uint32Array(list.length);
  for (let i = 0; i < list.length; i++) {
    const t = list[i];
    if (typeof t !== 'number' || !Number.isInteger(t) || t < 0 || t > MAX_TOKEN_ID) {
      throw bad(
        `${field}[${i}]: expected a token id (integer 0..${MAX_TOKEN_ID}), got ${JSON.stringify(t) ?? String(t)}`,
      );
    }
    tokens[i] = t;
  }
  return tokens;
}

function completionPrompt(prompt: unknown): Uint32Array {
  if (typeof prompt === 'string') return codePoints(prompt);
  if (!Array.isArray(prompt)) throw bad('prompt: expected token ids, a string, or a list with one of them');
  if (prompt.length === 1 && (Array.isArray(prompt[0]) || typeof prompt[0] === 'string')) {
    return typeof prompt[0] === 'string' ? codePoints(prompt[0]) : tokenArray(prompt[0] as unknown[], 'prompt[0]');
  }
  if (prompt.length > 1 && prompt.every((p) => Array.isArray(p) || typeof p === 'string')) {
    throw bad(`prompt: ${prompt.length} prompts in one request; the simulator serves one prompt per request`);
  }
  return tokenArray(prompt, 'prompt');
}

function messageText(content: unknown, where: string): string {
  if (typeof content === 'string') return content;
  if (content === null || content === undefined) return '';
  if (!Array.isArray(content)) throw bad(`${where}.content: expected a string or a list of parts`);
  return content
    .map((part, i) => {
      if (!isObject(part)) throw bad(`${where}.content[${i}]: expected an object`);
      return typeof part['text'] === 'string' ? part['text'] : '';
    })
    .join('');
}

/** chat messages rendered the way every simulated server tokenizes them (a fixed template, code points) */
export function renderChat(messages: unknown): Uint32Array {
  if (!Array.isArray(messages) || messages.length === 0) throw bad('messages: expected a non-empty list');
  let text = '';
  messages.forEach((m, i) => {
    if (!isObject(m)) throw bad(`messages[${i}]: expected an object`);
    const role = typeof m['role'] === 'string' ? m['role'] : 'user';
    text += `<|${role}|>${messageText(m['content'], `messages[${i}]`)}\n`;
  });
  return codePoints(`${text}<|assistant|>`);
}

function stringId(value: unknown): string | null {
  if (typeof value === 'string' && value !== '') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return null;
}

function header(headers: IncomingHttpHeaders, name: string): string | null {
  const v = headers[name];
  const s = Array.isArray(v) ? v[0] : v;
  return s === undefined || s === '' ? null : s;
}

/** span [start, end) of the top-level `"prompt"` value, or null (not found, or not plain JSON: the slow path reports) */
function promptSpan(text: string): [number, number] | null {
  const bytes = utf8Of(text);
  const s = new JsonScanner(bytes);
  const b = bytes;
  try {
    let i = s.skipWs(0);
    if (b[i] !== 123) return null;
    i = s.skipWs(i + 1);
    while (b[i] === 34) {
      const keyEnd = s.scanString(i);
      const isPrompt = keyEnd - i === 8 && s.text(i, keyEnd) === '"prompt"';
      i = s.skipWs(keyEnd);
      if (b[i] !== 58) return null;
      const start = s.skipWs(i + 1);
      const end = s.skipValue(start);
      if (isPrompt) {
        if (bytes.length === text.length) return [start, end];
        const chars = new CharOffsets(bytes, text);
        return [chars.of(start), chars.of(end)];
      }
      i = s.skipWs(end);
      if (b[i] !== 44) return null;
      i = s.skipWs(i + 1);
    }
    return null;
  } catch {
    return null;
  }
}

/** `[d,d,…]` of token ids straight into a Uint32Array; null for anything else (the slow path handles it) */
function fastTokenIds(text: string, start: number, end: number): Uint32Array | null {
  if (text.charCodeAt(start) !== 91) return null;
  let count = 0;
  for (let i = start; i < end; i++) if (text.charCodeAt(i) === 44) count++;
  const out = new Uint32Array(count + 1);
  let n = 0;
  let value = -1;
  for (let i = start + 1; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      if (value === 0) return null; // leading zero: not strict JSON
      value = value < 0 ? c - 48 : value * 10 + (c - 48);
      if (value > MAX_TOKEN_ID) return null;
    } else if (c === 44 || c === 93) {
      if (value < 0) return null;
      out[n++] = value;
      value = -1;
      if (c === 93) return i === end - 1 && n === count + 1 ? out : null;
    } else if (
      !(c === 32 || c === 10 || c === 13 || c === 9) ||
      (value >= 0 && text.charCodeAt(i + 1) >= 48 && text.charCodeAt(i + 1) <= 57)
    ) {
      return null;
    }
  }
  return null;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw bad(`request body is not JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** The body as the worker reads it: msgpack when flagged X-TRTLLM-Msgpack: 1, else JSON text. */
export function parseOpenAiRequestBytes(
  endpoint: OpenAiEndpoint,
  bytes: Buffer,
  headers: IncomingHttpHeaders,
): OpenAiRequest {
  if (header(headers, 'x-trtllm-msgpack') !== '1') return parseOpenAiRequest(endpoint, bytes.toString('utf8'), headers);
  let value: unknown;
  try {
    value = decode(bytes);
  } catch (err) {
    throw bad(`request body is not msgpack: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!isObject(value)) throw bad('request body: expected a msgpack map');
  const body: Record<string, unknown> = { ...value };
  const tokens = endpoint === 'completions' ? completionPrompt(body['prompt']) : chatTokens(body);
  const promptJson = endpoint === 'completions' ? JSON.stringify(body['prompt']) : null;
  delete body['prompt'];
  return requestOf(endpoint, body, tokens, promptJson, headers);
}

/** a chat request's ids: the router's prompt_token_ids when it wrote them, else the rendered messages */
function chatTokens(body: Record<string, unknown>): Uint32Array {
  const written = body['prompt_token_ids'];
  return Array.isArray(written) && written.length > 0
    ? tokenArray(written, 'prompt_token_ids')
    : renderChat(body['messages']);
}

export function parseOpenAiRequest(
  endpoint: OpenAiEndpoint,
  text: string,
  headers: IncomingHttpHeaders,
): OpenAiRequest {
  // long token-id prompts are read without building a JS array (the hot path of the live workload)
  const span = endpoint === 'completions' ? promptSpan(text) : null;
  const fast = span === null ? null : fastTokenIds(text, span[0], span[1]);
  let body: unknown;
  let tokens: Uint32Array;
  let promptJson: string | null = null;
  if (span !== null && fast !== null) {
    body = parseJson(`${text.slice(0, span[0])}null${text.slice(span[1])}`);
    tokens = fast;
    promptJson = text.slice(span[0], span[1]);
  } else {
    body = parseJson(text);
    if (!isObject(body)) throw bad('request body: expected a JSON object');
    tokens = endpoint === 'completions' ? completionPrompt(body['prompt']) : chatTokens(body);
    if (endpoint === 'completions') promptJson = JSON.stringify(body['prompt']);
  }
  if (!isObject(body)) throw bad('request body: expected a JSON object');
  delete body['prompt'];
  return requestOf(endpoint, body, tokens, promptJson, headers);
}

function requestOf(
  endpoint: OpenAiEndpoint,
  body: Record<string, unknown>,
  tokens: Uint32Array,
  promptJson: string | null,
  headers: IncomingHttpHeaders,
): OpenAiRequest {
  if (tokens.length === 0) throw bad(endpoint === 'completions' ? 'prompt: empty' : 'messages: empty');
  const rawMax = endpoint === 'chat' ? (body['max_completion_tokens'] ?? body['max_tokens']) : body['max_tokens'];
  if (
    rawMax !== undefined &&
    rawMax !== null &&
    (typeof rawMax !== 'number' || !Number.isInteger(rawMax) || rawMax < 1)
  ) {
    throw bad(`max_tokens: expected a positive integer, got ${JSON.stringify(rawMax)}`);
  }
  const stream = body['stream'];
  if (stream !== undefined && stream !== null && typeof stream !== 'boolean')
    throw bad('stream: expected true or false');
  const disagg = isObject(body['disaggregated_params']) ? body['disaggregated_params'] : null;
  const convParams = isObject(body['conversation_params']) ? body['conversation_params'] : null;
  let conversationId = stringId(convParams?.['conversation_id']) ?? stringId(disagg?.['conversation_id']);
  for (const name of AFFINITY_HEADERS) conversationId ??= header(headers, name);
  return {
    endpoint,
    body,
    promptJson,
    tokens,
    stream: stream === true,
    maxTokens: typeof rawMax === 'number' ? rawMax : null,
    model: typeof body['model'] === 'string' ? body['model'] : 'kvsentinel-sim',
    contextOnly: disagg?.['request_type'] === 'context_only',
    conversationId,
    correlationHeader: header(headers, 'x-correlation-id'),
    returnPromptTokenIdsB64: disagg?.['return_prompt_token_ids_b64'] === true,
  };
}
