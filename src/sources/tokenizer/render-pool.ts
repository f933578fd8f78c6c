// Renders text and chat CTX requests with the model's tokenizer on a worker thread, so the relay's event loop only
// forwards (a 40k-token chat render and encode takes tens of ms). At most `maxPending` renders wait at once; past
// that a request is not rendered ('busy', counted) rather than queueing without bound behind a slow tokenizer.
// When the thread cannot be used (its compiled file is missing, as under the test runner, or it died) the same
// render runs inline: same answers, the template on the event loop, the encode on libuv's pool.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { CtxBodyEncoding } from '../../core/relay/ctx-body-encoding.js';
import type { ModelTokenizer } from './model-tokenizer.js';
import { renderBody, type RenderOutcome } from './render-body.js';
import type { RenderReply, RenderRequest } from './render-thread.js';

const THREAD_FILE = fileURLToPath(new URL('./render-thread.js', import.meta.url));

export interface RenderPoolOptions {
  /** the tokenizer the daemon loaded (and so checked); the thread loads its own copy from tokenizer.files */
  readonly tokenizer: ModelTokenizer;
  readonly thread: boolean;
  readonly maxPending?: number;
}

export class RenderPool {
  readonly tokenizer: ModelTokenizer;
  readonly #useThread: boolean;
  readonly #maxPending: number;
  #worker: Worker | null = null;
  #failed = false;
  #nextId = 0;
  #inline = 0;
  readonly #pending = new Map<number, (outcome: RenderOutcome) => void>();

  constructor(options: RenderPoolOptions) {
    this.tokenizer = options.tokenizer;
    this.#useThread = options.thread && existsSync(THREAD_FILE);
    this.#maxPending = options.maxPending ?? 64;
  }

  get threaded(): boolean {
    return this.#useThread && !this.#failed;
  }

  /** `bytes` is copied to the thread; the caller may reuse it. Never rejects. */
  render(bytes: Uint8Array, encoding: CtxBodyEncoding): Promise<RenderOutcome> {
    if (this.#pending.size + this.#inline >= this.#maxPending) {
      return Promise.resolve({
        kind: 'failed',
        reason: 'busy',
        message: `${this.#maxPending} renders already waiting`,
      });
    }
    const worker = this.#ensureWorker();
    if (worker === null) {
      this.#inline++;
      return renderBody(this.tokenizer, bytes, encoding).finally(() => this.#inline--);
    }
    const id = ++this.#nextId;
    return new Promise((resolve) => {
      this.#pending.set(id, resolve);
      const copy = new Uint8Array(bytes.length);
      copy.set(bytes);
      const request: RenderRequest = { id, bytes: copy, encoding };
      worker.postMessage(request, [copy.buffer]);
    });
  }

  async close(): Promise<void> {
    const worker = this.#worker;
    this.#worker = null;
    this.#failed = true;
    this.#failAll('the render thread stopped');
    if (worker !== null) await worker.terminate();
  }

  #ensureWorker(): Worker | null {
    if (!this.threaded) return null;
    if (this.#worker !== null) return this.#worker;
    const worker = new Worker(THREAD_FILE, { workerData: { path: this.tokenizer.files.tokenizerJson } });
    worker.unref();
    worker.on('message', (reply: RenderReply) => {
      const done = this.#pending.get(reply.id);
      this.#pending.delete(reply.id);
      done?.(reply.outcome);
    });
    const fail = (): void => {
      this.#failed = true;
      this.#worker = null;
      this.#failAll('the render thread died');
    };
    worker.on('error', fail);
    worker.on('exit', fail);
    this.#worker = worker;
    return worker;
  }

  #failAll(message: string): void {
    for (const done of this.#pending.values()) done({ kind: 'failed', reason: 'tokenizer-error', message });
    this.#pending.clear();
  }
}
