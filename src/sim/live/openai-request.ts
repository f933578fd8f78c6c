// What the simulated servers read from an OpenAI `/v1/completions` or `/v1/chat/completions` body: the prompt as
// token ids (`prompt` token ids, or text / chat messages rendered to code points, the same on every server so the
// router and the workers agree), streaming, max_tokens, the disaggregated params and the conversation id.
// Bodies carry no 64-bit hashes, so JSON.parse is safe here; every rejection names the field and position.
import type { IncomingHttpHeaders } from 'node:http';
import { HttpError } from './http-kit.js';

export type OpenAiEndpoint = 'completions' | 'chat';

export interface OpenAiRequest {
  readonly endpoint: OpenAiEndpoint;
  readonly body: Record<string, unknown>;
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
      throw bad(`${field}[${i}]: expected a token id (integer 0..${MAX_TOKEN_ID}), got ${JSON.stringify(t) ?? String(t)}`);
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

export function parseOpenAiRequest(endpoint: OpenAiEndpoint, text: string, headers: IncomingHttpHeaders): OpenAiRequest {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw bad(`request body is not JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!isObject(body)) throw bad('request body: expected a JSON object');
  const tokens = endpoint === 'completions' ? completionPrompt(body['prompt']) : renderChat(body['messages']);
  if (tokens.length === 0) throw bad(endpoint === 'completions' ? 'prompt: empty' : 'messages: empty');
  const rawMax = endpoint === 'chat' ? (body['max_completion_tokens'] ?? body['max_tokens']) : body['max_tokens'];
  if (rawMax !== undefined && rawMax !== null && (typeof rawMax !== 'number' || !Number.isInteger(rawMax) || rawMax < 1)) {
    throw bad(`max_tokens: expected a positive integer, got ${JSON.stringify(rawMax)}`);
  }
  const stream = body['stream'];
  if (stream !== undefined && stream !== null && typeof stream !== 'boolean') throw bad('stream: expected true or false');
  const disagg = isObject(body['disaggregated_params']) ? body['disaggregated_params'] : null;
  const convParams = isObject(body['conversation_params']) ? body['conversation_params'] : null;
  let conversationId = stringId(convParams?.['conversation_id']) ?? stringId(disagg?.['conversation_id']);
  for (const name of AFFINITY_HEADERS) conversationId ??= header(headers, name);
  return {
    endpoint,
    body,
    tokens,
    stream: stream === true,
    maxTokens: typeof rawMax === 'number' ? rawMax : null,
    model: typeof body['model'] === 'string' ? body['model'] : 'kvsentinel-sim',
    contextOnly: disagg?.['request_type'] === 'context_only',
    conversationId,
    correlationHeader: header(headers, 'x-correlation-id'),
  };
}
