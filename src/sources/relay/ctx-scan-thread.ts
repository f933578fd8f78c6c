// The worker-thread side of CtxScanPool: one CtxRequestScanner per open request, fed the chunks the relay copies over,
// answered with the request info (the prompt's ids transferred, not copied) when the request's body ended.
import { parentPort } from 'node:worker_threads';
import type { CtxRequestInfo, HeaderBag } from '../../core/relay/ctx-request.js';
import { CtxRequestScanner } from '../../core/relay/ctx-request-scanner.js';

export type ScanRequest =
  | { readonly kind: 'chunk'; readonly id: number; readonly bytes: Uint8Array }
  | { readonly kind: 'finish'; readonly id: number; readonly headers: HeaderBag }
  | { readonly kind: 'drop'; readonly id: number };

export interface ScanReply {
  readonly id: number;
  /** null: the body needs parseCtxRequest's text path */
  readonly info: CtxRequestInfo | null;
}

const port = parentPort;
if (port !== null) {
  const open = new Map<number, CtxRequestScanner>();
  port.on('message', (m: ScanRequest) => {
    if (m.kind === 'chunk') {
      let scanner = open.get(m.id);
      if (scanner === undefined) {
        scanner = new CtxRequestScanner();
        open.set(m.id, scanner);
      }
      scanner.feed(m.bytes);
      return;
    }
    const scanner = open.get(m.id) ?? new CtxRequestScanner();
    open.delete(m.id);
    if (m.kind === 'drop') return;
    const info = scanner.finish(m.headers);
    const reply: ScanReply = { id: m.id, info };
    const tokens = info?.promptTokens;
    port.postMessage(reply, tokens !== null && tokens !== undefined ? [tokens.buffer as ArrayBuffer] : []);
  });
}
