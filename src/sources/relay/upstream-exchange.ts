// One proxied request's upstream side (see the class).
import { KvsentinelError } from '../../core/errors.js';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import { downstreamResponseHeaders } from './http-headers.js';

export interface UpstreamHead {
  readonly statusCode: number;
  readonly headers: IncomingHttpHeaders;
}

const CANCELLED = 'kvsentinel relay: request cancelled';

/** the headers go out alone when no body byte came in the same read (a slow first token still shows its status) */
function flushHeadersSoon(exchange: UpstreamExchange): void {
  exchange.flushHeadersIfIdle();
}

/**
 * One proxied request's upstream side, and itself undici's raw dispatch handler: response bytes go straight from the
 * upstream parser to the client response (no body stream, no pipeline, no AbortSignal, no closure per chunk), with
 * backpressure from the client socket pausing the upstream. The response headers are sent with the first body bytes
 * when those arrive in the same read (one write instead of two), else on the next tick.
 */
export class UpstreamExchange implements Dispatcher.DispatchHandler {
  readonly #res: ServerResponse;
  readonly #onRespond: () => void;
  #onChunk: ((chunk: Buffer) => void) | undefined;
  #controller: Dispatcher.DispatchController | null = null;
  #cancelled = false;
  #settled = false;
  #responded = false;
  #wroteBody = false;
  #waitingDrain = false;
  #head: UpstreamHead | null = null;
  #resolve: (head: UpstreamHead) => void = () => undefined;
  #reject: (err: Error) => void = () => undefined;

  /** `onRespond` runs when the upstream's status line arrives */
  constructor(res: ServerResponse, onRespond: () => void = () => undefined) {
    this.#res = res;
    this.#onRespond = onRespond;
  }

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
    this.#controller?.abort(new KvsentinelError('cancelled', CANCELLED));
    this.#fail(new KvsentinelError('cancelled', CANCELLED));
  }

  /** Forwards the request (`onChunk` sees each response chunk handed to the client); resolves with the upstream head once the whole response was handed to the client. Once per exchange. */
  run(
    dispatcher: Dispatcher,
    options: Dispatcher.DispatchOptions,
    onChunk?: (chunk: Buffer) => void,
  ): Promise<UpstreamHead> {
    this.#onChunk = onChunk;
    const done = new Promise<UpstreamHead>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    dispatcher.dispatch(options, this);
    return done;
  }

  /** @internal */
  flushHeadersIfIdle(): void {
    const res = this.#res;
    if (!this.#wroteBody && !res.writableEnded && !res.destroyed) res.flushHeaders();
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#cancelled) controller.abort(new KvsentinelError('cancelled', CANCELLED));
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    this.#responded = true;
    this.#onRespond();
    this.#head = { statusCode, headers };
    this.#res.writeHead(statusCode, downstreamResponseHeaders(headers));
    process.nextTick(flushHeadersSoon, this);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.#wroteBody = true;
    this.#onChunk?.(chunk);
    if (!this.#res.write(chunk) && !this.#waitingDrain) {
      // the client reads slower than the worker writes: stop reading the worker until the client caught up
      this.#waitingDrain = true;
      controller.pause();
      this.#res.once('drain', () => {
        this.#waitingDrain = false;
        this.#controller?.resume();
      });
    }
  }

  onResponseEnd(): void {
    const head = this.#head;
    this.#res.end((err?: Error | null) => {
      if (err) this.#fail(err);
      else if (head !== null && !this.#settled) {
        this.#settled = true;
        this.#resolve(head);
      }
    });
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.#fail(err);
  }

  #fail(err: Error): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#reject(err);
  }
}
