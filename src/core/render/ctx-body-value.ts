// A whole CTX request body as values, by its encoding (JSON, or msgpack as the newest orchestrator sends it), for the
// render of text and chat requests. Null when it cannot be decoded. Pure.
import { decode } from '@msgpack/msgpack';
import type { CtxBodyEncoding } from '../relay/ctx-body-encoding.js';

const utf8 = new TextDecoder('utf-8', { fatal: false });

export function ctxBodyValue(bytes: Uint8Array, encoding: CtxBodyEncoding): unknown {
  try {
    if (encoding === 'json') return JSON.parse(utf8.decode(bytes)) as unknown;
    if (encoding === 'msgpack') return decode(bytes, { useBigInt64: true });
  } catch {
    return null;
  }
  return null;
}
