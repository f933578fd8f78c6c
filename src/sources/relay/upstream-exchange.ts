// One proxied request's upstream side (see the class).
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import { downstreamResponseHeaders } from './http-headers.js';

/**
 * One proxied request's upstream side, driven by undici's raw dispatch handler: response bytes go straight from the
 * upstream parser to the client response (no body stream, no pipeline, no AbortSignal per request), with backpressure
 * from the client socket pausing the upstream. The response headers are sent with the first body bytes when those
 * arrive in the same read (one write instead of two), else on the next tick, so a slow first token still shows
 * the client its status at once.
 */
export class UpstreamExchange {
  readonly #res: ServerResponse;
  #controller: Dispatcher.DispatchController | null = null;
  #cancelled = false;
  #settled = false;
  #resolve: (head: { statusCode: number; headers: IncomingHttpHeaders }) => void = () => undefined;
  #reject: (err: Error) => void = () => undefined;

  readonly #onRespond: () => void;

  /** `onRespond` runs when the upstream's status line arrives */
  constructor(res: ServerResponse, onRespond: () => void = () => undefined) {
    this.#res = res;
    this.#onRespond = onRespond;
  }

  #responded = false;

  /** the upstream answered (status line received): from then on a failure can no longer be retried */
  get responded(): boolean {
    return this.#responded;
  }

  /** true once the exchange was cancelled on purpose (client gone, body refused): not an upstream failure */
  get cancelled(): boolean {
    return this.#cancelled;
  }

  cancel(): void {
    if (this.#cancelled) return;
    this.#cancelled = true;
    this.#controller?.abort(new Error('kvsentinel relay: request cancelled'));
    this.#fail(new Error('kvsentinel relay: request cancelled'));
  }

  /** Forwards the request (`onChunk` sees each response chunk handed to the client); resolves with the upstream head once the whole response was handed to the client. */
  run(
    dispatcher: Dispatcher,
    options: Dispatcher.DispatchOptions,
    onChunk?: (chunk: Buffer) => void,
  ): Promise<{ statusCode: number; headers: IncomingHttpHeaders }> {
    const res = this.#res;
    const done = new Promise<{ statusCode: number; headers: IncomingHttpHeaders }>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    let head: { statusCode: number; headers: IncomingHttpHeaders } | null = null;
    let wroteBody = false;
    let waitingDrain = false;
    const resume = (): void => {
      waitingDrain = false;
      this.#controller?.resume();
    };
    dispatcher.dispatch(options, {
      onRequestStart: (controller) => {
        this.#controller = controller;
        if (this.#cancelled) controller.abort(new Error('kvsentinel relay: request cancelled'));
      },
      onResponseStart: (_controller, statusCode, headers) => {
        this.#responded = true;
        this.#onRespond();
        head = { statusCode, headers };
        res.writeHead(statusCode, downstreamResponseHeaders(headers));
        process.nextTick(() => {
          if (!wroteBody && !res.writableEnded && !res.destroyed) res.flushHeaders();
        });
      },
      onResponseData: (controller, chunk) => {
        wroteBody = true;
        onChunk?.(chunk);
        if (!res.write(chunk) && !waitingDrain) {
          // the client reads slower than the worker writes: stop reading the worker until the client caught up
          waitingDrain = true;
          controller.pause();
          res.once('drain', resume);
        }
      },
      onResponseEnd: () => {
        const h = head;
        res.end((err?: Error | null) => {
          if (err) this.#fail(err);
          else if (h !== null && !this.#settled) {
            this.#settled = true;
            this.#resolve(h);
          }
        });
      },
      onResponseError: (_controller, err) => this.#fail(err),
    });
    return done;
  }

  #fail(err: Error): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#reject(err);
  }
}
