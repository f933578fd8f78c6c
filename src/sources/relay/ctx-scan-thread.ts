// The worker-thread side of CtxScanPool: one body reader per open request (by its encoding), fed the chunks the relay
// copies over, answered with the request info (the prompt's ids transferred, not copied) when the request's body
// ended; and CTX responses parsed whole (usage and the worker's prompt token ids), off the relay's event loop.
import { writeFileSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import type { CtxBodyEncoding } from '../../core/relay/ctx-body-encoding.js';
import { createCtxBodyReader, type CtxBodyReader } from '../../core/relay/ctx-body-reader.js';
import type { CtxRequestInfo, HeaderBag } from '../../core/relay/ctx-request.js';
import { parseCtxResponse, type CtxResponseInfo, type CtxResponseShape } from '../../core/relay/ctx-response.js';

export type ScanRequest =
  | { readonly kind: 'chunk'; readonly id: number; readonly encoding: CtxBodyEncoding; readonly bytes: Uint8Array }
  | { readonly kind: 'finish'; readonly id: number; readonly encoding: CtxBodyEncoding; readonly headers: HeaderBag }
  | { readonly kind: 'drop'; readonly id: number }
  | { readonly kind: 'response'; readonly id: number; readonly bytes: Uint8Array; readonly shape: CtxResponseShape };

export type ScanReply =
  /** info null: the body needs parseCtxRequest's text path */
  | { readonly kind: 'request'; readonly id: number; readonly info: CtxRequestInfo | null }
  | { readonly kind: 'response'; readonly id: number; readonly info: CtxResponseInfo };

/** The thread's name in `top -H` and /proc (the benchmark splits the relay's CPU by thread with it); Linux only. */
export const SCAN_THREAD_NAME = 'kvs-scan';

const port = parentPort;
if (port !== null) {
  try {
    writeFileSync('/proc/thread-self/comm', SCAN_THREAD_NAME);
  } catch {
    // not Linux, or /proc not mounted: the name is only a convenience
  }
  const open = new Map<number, CtxBodyReader>();
  port.on('message', (m: ScanRequest) => {
    if (m.kind === 'response') {
      const info = parseCtxResponse(m.bytes, m.shape);
      const reply: ScanReply = { kind: 'response', id: m.id, info };
      const tokens = info.workerPromptTokens;
      port.postMessage(reply, tokens !== null ? [tokens.buffer as ArrayBuffer] : []);
      return;
    }
    if (m.kind === 'chunk') {
      let reader = open.get(m.id);
      if (reader === undefined) {
        reader = createCtxBodyReader(m.encoding);
        open.set(m.id, reader);
      }
      reader.feed(m.bytes);
      return;
    }
    const reader = open.get(m.id);
    open.delete(m.id);
    if (m.kind === 'drop') return;
    const info = (reader ?? createCtxBodyReader(m.encoding)).finish(m.headers);
    const reply: ScanReply = { kind: 'request', id: m.id, info };
    const tokens = info?.promptTokens;
    port.postMessage(reply, tokens !== null && tokens !== undefined ? [tokens.buffer as ArrayBuffer] : []);
  });
}
