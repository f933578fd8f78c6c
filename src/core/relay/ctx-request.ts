// What the relay learns from a CTX request body and headers (trtllm-wire.md §5): prompt token ids when the request
// carries them, the disaggregated request id, and the trajectory id the conversation router would use.
// disagg_request_id may be a 64-bit integer: it is read from the raw text, never through a JS number.

export interface CtxRequestInfo {
  /** token ids of the (first) prompt when sent as ids; null for text prompts or chat messages */
  readonly promptTokens: Uint32Array | null;
  readonly promptCount: number;
  readonly disaggRequestId: string | null;
  readonly requestType: string | null;
  readonly correlationId: string | null;
  readonly stream: boolean;
}

export type HeaderBag = Readonly<Record<string, string | readonly string[] | undefined>>;

/** Header names, in priority order, that carry a trajectory id (conversation router order, then X-Correlation-ID). */
export const CORRELATION_HEADERS = ['x-correlation-id', 'x-session-id', 'x-session-affinity', 'x-multi-turn-session-id'] as const;

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

/** Never throws: a body that is not JSON yields nulls (headers still give the correlation id). */
export function parseCtxRequest(bodyText: string | null, headers: HeaderBag): CtxRequestInfo {
  let body: unknown = null;
  if (bodyText !== null) {
    try {
      body = JSON.parse(bodyText);
    } catch {
      body = null;
    }
  }
  const obj = isRecord(body) ? body : {};
  const disagg = isRecord(obj['disaggregated_params']) ? obj['disaggregated_params'] : {};
  const convParams = isRecord(obj['conversation_params']) ? obj['conversation_params'] : {};

  let promptTokens: Uint32Array | null = null;
  let promptCount = 0;
  const prompt = obj['prompt'];
  if (typeof prompt === 'string') promptCount = 1;
  else if (Array.isArray(prompt) && prompt.length > 0) {
    if (typeof prompt[0] === 'number') {
      promptTokens = toTokens(prompt);
      promptCount = 1;
    } else {
      promptCount = prompt.length;
      promptTokens = toTokens(prompt[0]);
    }
  } else if (Array.isArray(obj['messages'])) promptCount = 1;
  promptTokens ??= toTokens(obj['prompt_token_ids']);

  let disaggRequestId: string | null = null;
  if (bodyText !== null && 'disagg_request_id' in disagg) {
    const m = DISAGG_ID.exec(bodyText);
    if (m?.[1] !== undefined) disaggRequestId = m[1].startsWith('"') ? (JSON.parse(m[1]) as string) : m[1];
  }

  let correlationId = stringId(convParams['conversation_id']) ?? stringId(disagg['conversation_id']);
  for (const name of CORRELATION_HEADERS) correlationId ??= header(headers, name);

  return {
    promptTokens,
    promptCount,
    disaggRequestId,
    requestType: typeof disagg['request_type'] === 'string' ? disagg['request_type'] : null,
    correlationId,
    stream: obj['stream'] === true,
  };
}
