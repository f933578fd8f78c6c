// The worker-thread side of RenderPool: loads the model's tokenizer once (workerData.path, already checked by the
// daemon) and renders each body it is sent; the ids are transferred back, not copied.
import { parentPort, workerData } from 'node:worker_threads';
import type { CtxBodyEncoding } from '../../core/relay/ctx-body-encoding.js';
import { ModelTokenizer } from './model-tokenizer.js';
import { renderBody, type RenderOutcome } from './render-body.js';

export interface RenderRequest {
  readonly id: number;
  readonly bytes: Uint8Array;
  readonly encoding: CtxBodyEncoding;
}

export interface RenderReply {
  readonly id: number;
  readonly outcome: RenderOutcome;
}

const port = parentPort;
if (port !== null) {
  const tokenizer = ModelTokenizer.load((workerData as { path: string }).path);
  port.on('message', (m: RenderRequest) => {
    void renderBody(tokenizer, m.bytes, m.encoding).then((outcome) => {
      const reply: RenderReply = { id: m.id, outcome };
      port.postMessage(reply, outcome.kind === 'rendered' ? [outcome.ids.buffer as ArrayBuffer] : []);
    });
  });
}
