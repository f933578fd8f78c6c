// What the relay reads from a CTX worker's answer: the usage (prompt_tokens, cached_tokens) and the worker's own
// token ids of the prompt. TensorRT-LLM's context-only responses carry them at the top level (openai_protocol.py):
// `prompt_token_ids` — a list, or for several completion prompts a list of lists — or, when the request set
// `disaggregated_params.return_prompt_token_ids_b64` (chat only, openai_server.py), `prompt_token_ids_b64`: base64
// of the ids as int32 in numpy's native order (little-endian on every platform TensorRT-LLM ships for), with
// `prompt_token_ids` null. Those ids are the worker's truth for the prompt (its tokenizer and chat template).
// Responses are JSON in every version read; a response flagged `X-TRTLLM-Msgpack: 1` is decoded as msgpack.
import { decode } from '@msgpack/msgpack';
import { parseCompletionUsage, type CompletionUsage } from './completion-usage.js';
import { valueTokens } from './ctx-request-object.js';

export type WorkerPromptTokenForm = 'list' | 'lists' | 'b64';

export interface CtxResponseInfo extends CompletionUsage {
  /** the worker's token ids of the (first) prompt; null when the response carries none */
  readonly workerPromptTokens: Uint32Array | null;
  readonly workerPromptTokenForm: WorkerPromptTokenForm | null;
  /** the response had a prompt_token_ids(_b64) member the relay could not read (bad base64, negative ids …) */
  readonly workerPromptTokensInvalid: boolean;
}

const NONE = { workerPromptTokens: null, workerPromptTokenForm: null, workerPromptTokensInvalid: false } as const;

function count(v: unknown): number | null {
  const n = typeof v === 'bigint' ? Number(v) : v;
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 ? n : null;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** base64 of little-endian int32 ids → uint32 ids; null when it is not that (bad base64, length, negative id) */
export function decodeTokenIdsB64(text: string): Uint32Array | null {
  let binary: string;
  try {
    binary = atob(text);
  } catch {
    return null;
  }
  if (binary.length % 4 !== 0 || binary.length === 0) return null;
  const out = new Uint32Array(binary.length / 4);
  for (let i = 0; i < out.length; i++) {
    const o = i * 4;
    const b3 = binary.charCodeAt(o + 3);
    if (b3 >= 0x80) return null; // a negative int32 is no token id
    out[i] = binary.charCodeAt(o) | (binary.charCodeAt(o + 1) << 8) | (binary.charCodeAt(o + 2) << 16) | (b3 << 24);
  }
  return out;
}

function workerTokensOf(
  body: Record<string, unknown>,
): Pick<CtxResponseInfo, 'workerPromptTokens' | 'workerPromptTokenForm' | 'workerPromptTokensInvalid'> {
  const b64 = body['prompt_token_ids_b64'];
  if (typeof b64 === 'string') {
    const tokens = decodeTokenIdsB64(b64);
    return tokens === null
      ? { ...NONE, workerPromptTokensInvalid: true }
      : { workerPromptTokens: tokens, workerPromptTokenForm: 'b64', workerPromptTokensInvalid: false };
  }
  const ids = body['prompt_token_ids'];
  if (ids === undefined || ids === null) return NONE;
  const nested = Array.isArray(ids) && ids.length > 0 && Array.isArray(ids[0]);
  const tokens = valueTokens(nested ? (ids as unknown[])[0] : ids);
  if (tokens === null) return { ...NONE, workerPromptTokensInvalid: true };
  return {
    workerPromptTokens: tokens,
    workerPromptTokenForm: nested ? 'lists' : 'list',
    workerPromptTokensInvalid: false,
  };
}

function fromValue(body: unknown): CtxResponseInfo {
  if (!isRecord(body)) return { promptTokens: null, cachedTokens: null, ...NONE };
  const usage = isRecord(body['usage']) ? body['usage'] : {};
  const details = isRecord(usage['prompt_tokens_details']) ? usage['prompt_tokens_details'] : {};
  return {
    promptTokens: count(usage['prompt_tokens']),
    cachedTokens: count(details['cached_tokens']),
    ...workerTokensOf(body),
  };
}

export interface CtxResponseShape {
  readonly sse: boolean;
  /** false when only the tail of a large response was kept */
  readonly complete: boolean;
  readonly msgpack: boolean;
}

/** Never throws. SSE and truncated responses give the usage only (context-only responses are never streamed). */
export function parseCtxResponse(body: Uint8Array, shape: CtxResponseShape): CtxResponseInfo {
  if (shape.msgpack && shape.complete && !shape.sse) {
    try {
      return fromValue(decode(body, { useBigInt64: true }));
    } catch {
      return { promptTokens: null, cachedTokens: null, ...NONE };
    }
  }
  const text = new TextDecoder().decode(body);
  if (shape.sse || !shape.complete) return { ...parseCompletionUsage(text, shape), ...NONE };
  try {
    return fromValue(JSON.parse(text));
  } catch {
    return { promptTokens: null, cachedTokens: null, ...NONE };
  }
}
