// Reads CTX request bodies on a worker thread, so the relay's event loop only forwards bytes (design: the relay must
// never hold the data path for analysis). Each chunk is copied to the thread as it passes; when the body ended the
// thread answers with the request info. One thread answers in the order requests finished, which is the order the
// relay records decisions in.
//
// When the thread cannot be used (its compiled file is missing, as when the sources run untranspiled under the test
// runner, or the thread died) scanning happens inline with the same scanner: same answers, on the event loop.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { CtxRequestInfo, HeaderBag } from '../../core/relay/ctx-request.js';
import { CtxRequestScanner } from '../../core/relay/ctx-request-scanner.js';
import type { ScanReply, ScanRequest } from './ctx-scan-thread.js';

/** One request's scan: feed every chunk, then finish once (or drop). */
export interface CtxScan {
  feed(chunk: Uint8Array): void;
  /** the request info; null when the body needs parseCtxRequest's text path */
  finish(headers: HeaderBag): Promise<CtxRequestInfo | null>;
  drop(): void;
}

const THREAD_FILE = fileURLToPath(new URL('./ctx-scan-thread.js', import.meta.url));

class InlineScan implements CtxScan {
  readonly #scanner = new CtxRequestScanner();

  feed(chunk: Uint8Array): void {
    this.#scanner.feed(chunk);
  }

  finish(headers: HeaderBag): Promise<CtxRequestInfo | null> {
    return Promise.resolve(this.#scanner.finish(headers));
  }

  drop(): void {
    // nothing held
  }
}

export class CtxScanPool {
  readonly #useThread: boolean;
  #worker: Worker | null = null;
  #failed = false;
  #nextId = 0;
  readonly #pending = new Map<number, (info: CtxRequestInfo | null | undefined) => void>();

  /** `thread: false` scans inline (and so does a missing thread file). */
  constructor(options: { thread: boolean }) {
    this.#useThread = options.thread && existsSync(THREAD_FILE);
  }

  /** True while scans run on the worker thread. */
  get threaded(): boolean {
    return this.#useThread && !this.#failed;
  }

  open(): CtxScan {
    const worker = this.#ensureWorker();
    if (worker === null) return new InlineScan();
    const id = ++this.#nextId;
    // requests that fall back (thread died mid-request) rescan from the relay's capture
    const send = (m: ScanRequest, transfer: ArrayBuffer[] = []): boolean => {
      if (this.#failed) return false;
      worker.postMessage(m, transfer);
      return true;
    };
    return {
      feed: (chunk) => {
        const copy = new Uint8Array(chunk); // the relay still forwards the original
        send({ kind: 'chunk', id, bytes: copy }, [copy.buffer]);
      },
      finish: (headers) =>
        new Promise((resolve, reject) => {
          this.#pending.set(id, (info) => (info === undefined ? reject(new Error('scan thread stopped')) : resolve(info)));
          // plain header values only: the bag is cloned to the thread
          if (!send({ kind: 'finish', id, headers: { ...headers } })) {
            this.#pending.delete(id);
            reject(new Error('scan thread stopped'));
          }
        }),
      drop: () => {
        send({ kind: 'drop', id });
      },
    };
  }

  async close(): Promise<void> {
    const worker = this.#worker;
    this.#worker = null;
    this.#failed = true;
    this.#failAll();
    if (worker !== null) await worker.terminate();
  }

  #ensureWorker(): Worker | null {
    if (!this.threaded) return null;
    if (this.#worker !== null) return this.#worker;
    const worker = new Worker(THREAD_FILE);
    worker.unref();
    worker.on('message', (reply: ScanReply) => {
      const done = this.#pending.get(reply.id);
      this.#pending.delete(reply.id);
      done?.(reply.info);
    });
    const fail = (): void => {
      this.#failed = true;
      this.#worker = null;
      this.#failAll();
    };
    worker.on('error', fail);
    worker.on('exit', fail);
    this.#worker = worker;
    return worker;
  }

  #failAll(): void {
    for (const done of this.#pending.values()) done(undefined);
    this.#pending.clear();
  }
}
