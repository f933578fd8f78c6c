// What the relay learns from a CTX request body and headers (docs/trtllm-wire.md §5): prompt token ids when the request
// carries them, the disaggregated request id, and the trajectory id the conversation router would use.
// disagg_request_id may be a 64-bit integer: it is read from the raw text, never through a JS number.
// A body whose prompt cannot be read says why (`unreadable`), so a blind relay is counted, never silent.
import type { PromptForm, RequestUnreadableReason } from './request-unreadable.js';
import { doubledUint32 } from '../tables/doubled-uint32.js';

export interface CtxRequestInfo {
  /** token ids of the (first) prompt when sent as ids; null for text prompts or chat messages */
  readonly promptTokens: Uint32Array | null;
  readonly promptCount: number;
  readonly disaggRequestId: string | null;
  readonly requestType: string | null;
  readonly correlationId: string | null;
  readonly stream: boolean;
  /** how the prompt was sent; null when no prompt could be read */
  readonly promptForm: PromptForm | null;
  /** why the prompt or ids could not be read; null when they could (text and chat prompts are readable) */
  readonly unreadable: RequestUnreadableReason | null;
}

export type HeaderBag = Readonly<Record<string, string | readonly string[] | undefined>>;

/** Header names, in priority order, that carry a trajectory id (conversation router order, then X-Correlation-ID). */
export const CORRELATION_HEADERS = [
  'x-correlation-id',
  'x-session-id',
  'x-session-affinity',
  'x-multi-turn-session-id',
] as const;

function header(headers: HeaderBag, name: string): string | null {
  const v = headers[name];
  const s = Array.isArray(v) ? (v[0] as string | undefined) : (v as string | undefined);
  return s !== undefined && s !== '' ? s : null;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function toTokens(v: unknown): Uint32Array | null {
  if (!Array.isArray(v) || v.length === 0) return null;
  const out = new Uint32Array(v.length);
  for (let i = 0; i < v.length; i++) {
    const t: unknown = v[i];
    if (typeof t !== 'number' || !Number.isInteger(t) || t < 0 || t > 0xffff_ffff) return null;
    out[i] = t;
  }
  return out;
}

const DISAGG_ID = /"disagg_request_id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")/;

function stringId(v: unknown): string | null {
  if (typeof v === 'string' && v !== '') return v;
  if (typeof v === 'number' && Number.isSafeInteger(v)) return String(v);
  return null;
}

/**
 * Top-level members of a JSON object as [start, end) slices of their values, without materialising them: a 40k-token
 * prompt is only scanned, never turned into a JS array. Null when the text is not an object (or is malformed).
 */
function topLevelMembers(text: string): Map<string, [number, number]> | null {
  const n = text.length;
  const ws = (c: number): boolean => c === 32 || c === 9 || c === 10 || c === 13;
  let i = 0;
  while (i < n && ws(text.charCodeAt(i))) i++;
  if (text.charCodeAt(i) !== 123) return null;
  i++;
  const out = new Map<string, [number, number]>();
  const skipString = (k: number): number => {
    k++;
    while (k < n) {
      const c = text.charCodeAt(k);
      if (c === 92) k += 2;
      else if (c === 34) return k + 1;
      else k++;
    }
    return -1;
  };
  for (;;) {
    while (i < n && ws(text.charCodeAt(i))) i++;
    if (text.charCodeAt(i) === 125) return out;
    if (text.charCodeAt(i) !== 34) return null;
    const keyEnd = skipString(i);
    if (keyEnd < 0) return null;
    const key = text.slice(i + 1, keyEnd - 1);
    i = keyEnd;
    while (i < n && ws(text.charCodeAt(i))) i++;
    if (text.charCodeAt(i) !== 58) return null;
    i++;
    while (i < n && ws(text.charCodeAt(i))) i++;
    const start = i;
    let depth = 0;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 34) {
        i = skipString(i);
        if (i < 0) return null;
        continue;
      }
      if (c === 123 || c === 91) depth++;
      else if (c === 125 || c === 93) {
        if (depth === 0) break;
        depth--;
      } else if (c === 44 && depth === 0) break;
      i++;
    }
    if (i >= n) return null;
    let end = i;
    while (end > start && ws(text.charCodeAt(end - 1))) end--;
    out.set(key, [start, end]);
    if (text.charCodeAt(i) === 44) i++;
  }
}

/** `[1,2,3]` straight into a Uint32Array; null when the slice is anything else. */
function scanTokenArray(text: string, start: number, end: number): Uint32Array | null {
  if (text.charCodeAt(start) !== 91) return null;
  let out = new Uint32Array(Math.max(16, (end - start) >> 2));
  let count = 0;
  let i = start + 1;
  let expectValue = true;
  while (i < end) {
    const c = text.charCodeAt(i);
    if (c === 32 || c === 9 || c === 10 || c === 13) {
      i++;
      continue;
    }
    if (c === 93) return expectValue && count > 0 ? null : out.slice(0, count);
    if (c === 44) {
      if (expectValue) return null;
      expectValue = true;
      i++;
      continue;
    }
    if (!expectValue || c < 48 || c > 57) return null;
    let v = 0;
    while (i < end) {
      const d = text.charCodeAt(i) - 48;
      if (d < 0 || d > 9) break;
      v = v * 10 + d;
      if (v > 0xffff_ffff) return null;
      i++;
    }
    if (count === out.length) out = doubledUint32(out);
    out[count++] = v;
    expectValue = false;
  }
  return null;
}

function parseJson(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * What parseCtxRequest needs from a body's top-level members: parseCtxRequest builds it from the whole text,
 * CtxRequestScanner (ctx-request-scanner.ts) from the body's bytes as they stream through the relay.
 */
export interface CtxMemberView {
  has(key: string): boolean;
  /** the value's source text, trimmed (only the small members are ever asked for) */
  text(key: string): string | undefined;
  /** the character code where the value starts (the terminator when the value is empty) */
  firstChar(key: string): number | undefined;
  /** the value as a flat array of uint32 ids, null when it is anything else */
  tokens(key: string): Uint32Array | null;
}

/** Assembles the request info from a body's members (null: the body is not an object) and the headers. */
export function ctxInfoFromMembers(members: CtxMemberView | null, headers: HeaderBag): CtxRequestInfo {
  if (members === null) return unreadableCtxRequest('malformed', headers);
  const get = (key: string): unknown => (members !== null ? parseJson(members.text(key)) : undefined);
  const disaggRaw = get('disaggregated_params');
  const disagg = isRecord(disaggRaw) ? disaggRaw : {};
  const convRaw = get('conversation_params');
  const convParams = isRecord(convRaw) ? convRaw : {};

  let promptTokens: Uint32Array | null = null;
  let promptCount = 0;
  let promptForm: PromptForm | null = null;
  let unreadable: RequestUnreadableReason | null = null;
  if (members.has('prompt')) {
    const first = members.firstChar('prompt');
    if (first === 34) {
      promptCount = 1;
      promptForm = 'text';
    } else if (first === 91) {
      promptTokens = members.tokens('prompt');
      if (promptTokens !== null) promptCount = promptTokens.length > 0 ? 1 : 0;
      else {
        // several prompts (or strings): the small general path
        const prompt = get('prompt');
        if (Array.isArray(prompt) && prompt.length > 0) {
          promptCount = prompt.length;
          if (prompt.every((p) => typeof p === 'string')) promptForm = 'text';
          else promptTokens = toTokens(prompt[0]);
        }
      }
      if (promptTokens !== null && promptTokens.length === 0) promptTokens = null;
      if (promptTokens !== null) promptForm = 'token-ids';
      else if (promptForm === null) unreadable = 'malformed';
    } else unreadable = 'malformed';
  } else if (members.has('messages')) {
    promptCount = 1;
    promptForm = 'chat';
  }
  if (promptTokens === null && members.has('prompt_token_ids')) {
    promptTokens = members.tokens('prompt_token_ids');
    if (promptTokens !== null && promptTokens.length === 0) promptTokens = null;
    // the router wrote its own ids into a text or chat request (newest routers): they are the router's tokens
    if (promptTokens !== null) {
      promptForm ??= 'token-ids';
      unreadable = null;
    }
  }
  if (promptForm === null && unreadable === null) unreadable = 'no_prompt';

  let disaggRequestId: string | null = null;
  const disaggText = members.text('disaggregated_params');
  if (disaggText !== undefined && 'disagg_request_id' in disagg) {
    const m = DISAGG_ID.exec(disaggText);
    if (m?.[1] !== undefined) disaggRequestId = m[1].startsWith('"') ? (JSON.parse(m[1]) as string) : m[1];
  }

  const correlationId =
    stringId(convParams['conversation_id']) ?? stringId(disagg['conversation_id']) ?? headerCorrelationId(headers);

  return {
    promptTokens,
    promptCount,
    disaggRequestId,
    requestType: typeof disagg['request_type'] === 'string' ? disagg['request_type'] : null,
    correlationId,
    stream: get('stream') === true,
    promptForm,
    unreadable,
  };
}

/** The headers the request info reads (the correlation ones): all a scan elsewhere needs of a request's headers. */
export function correlationHeaders(headers: HeaderBag): HeaderBag {
  const out: Record<string, string | readonly string[]> = {};
  for (const name of CORRELATION_HEADERS) {
    const v = headers[name];
    if (v !== undefined) out[name] = v;
  }
  return out;
}

/** The correlation id the headers give, in the conversation router's order. */
export function headerCorrelationId(headers: HeaderBag): string | null {
  let id: string | null = null;
  for (const name of CORRELATION_HEADERS) id ??= header(headers, name);
  return id;
}

/** A request whose body could not be read: only the headers say something (the correlation id). */
export function unreadableCtxRequest(reason: RequestUnreadableReason, headers: HeaderBag): CtxRequestInfo {
  return {
    promptTokens: null,
    promptCount: 0,
    disaggRequestId: null,
    requestType: null,
    correlationId: headerCorrelationId(headers),
    stream: false,
    promptForm: null,
    unreadable: reason,
  };
}

/** Never throws: a body that is not JSON yields nulls (headers still give the correlation id). */
export function parseCtxRequest(bodyText: string | null, headers: HeaderBag): CtxRequestInfo {
  const members = bodyText !== null ? topLevelMembers(bodyText) : null;
  if (bodyText === null || members === null) return unreadableCtxRequest('malformed', headers);
  const view: CtxMemberView = {
    has: (key) => members.has(key),
    text: (key) => {
      const slice = members.get(key);
      return slice === undefined ? undefined : bodyText.slice(slice[0], slice[1]);
    },
    firstChar: (key) => {
      const slice = members.get(key);
      return slice === undefined ? undefined : bodyText.charCodeAt(slice[0]);
    },
    tokens: (key) => {
      const slice = members.get(key);
      return slice === undefined ? null : scanTokenArray(bodyText, slice[0], slice[1]);
    },
  };
  return ctxInfoFromMembers(view, headers);
}
