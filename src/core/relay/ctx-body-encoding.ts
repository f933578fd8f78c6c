// How a CTX request body is encoded, from its headers alone (the relay decides before the first byte arrives).
// TensorRT-LLM's orchestrator with TRTLLM_SERVE_ENABLE_MSGSPEC=1 sends msgpack bodies with
// `Content-Type: application/json` and `X-TRTLLM-Msgpack: 1`; the worker decodes msgpack exactly when that header is
// "1" and JSON otherwise (openai_server.py `_MsgspecRequest.json`), so the relay reads the body the same way.
// Responses and SSE stay JSON in every version read. A Content-Encoding (gzip, …) is not decoded: counted unreadable.
import type { HeaderBag } from './ctx-request.js';

export type CtxBodyEncoding = 'json' | 'msgpack' | 'unknown';

export const MSGPACK_FLAG_HEADER = 'x-trtllm-msgpack';

function first(headers: HeaderBag, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? (v[0] as string | undefined) : (v as string | undefined);
}

export function ctxBodyEncoding(headers: HeaderBag): CtxBodyEncoding {
  const coding = first(headers, 'content-encoding')?.trim().toLowerCase();
  if (coding !== undefined && coding !== '' && coding !== 'identity') return 'unknown';
  return first(headers, MSGPACK_FLAG_HEADER) === '1' ? 'msgpack' : 'json';
}
