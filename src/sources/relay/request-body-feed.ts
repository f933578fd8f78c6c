// The one reader of a proxied request's body: a single 'data' listener on the client's request checks the size
// limit, hands the chunk to the upstream, keeps it for a retry and shows it to the recorder — in that order, so each
// chunk is on its way to the worker before anything looks at it.
//
// The upstream client (undici) reads a plain Readable of its own, never the client's request: undici destroys the
// body it was given when its attempt fails or is cancelled, and that must end neither the client's connection (a 413
// or a 502 still has to be answered on it) nor the rest of the body (a retry sends it again). A Readable fed by
// push() is the least machinery that gives undici a stream with backpressure: when the upstream socket is full,
// undici pauses it, pushes buffer, and the client's request is paused until undici reads again.
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import type { BodyReplay } from './body-replay.js';

/** What sees each forwarded chunk after the upstream got it (the CTX recorder). */
export interface BodyWatcher {
  requestChunk(chunk: Buffer): void;
  requestEnd(): void;
}

/** The body as the upstream reads it; `_read` (undici wants more) lets the client's request flow again. */
class UpstreamBody extends Readable {
  readonly #source: IncomingMessage;

  constructor(source: IncomingMessage) {
    super();
    this.#source = source;
  }

  override _read(): void {
    if (this.#source.isPaused()) this.#source.resume();
  }
}

export class RequestBodyFeed {
  readonly #source: IncomingMessage;
  readonly #limit: number;
  readonly #replay: BodyReplay;
  readonly #watcher: BodyWatcher | undefined;
  readonly #onTooLarge: () => void;
  #current: UpstreamBody;
  #received = 0;
  #tooLarge = false;

  /** `onTooLarge` runs once, when the streamed body crosses `limit` (that chunk and all later ones go nowhere). */
  constructor(
    source: IncomingMessage,
    limit: number,
    replay: BodyReplay,
    watcher: BodyWatcher | undefined,
    onTooLarge: () => void,
  ) {
    this.#source = source;
    this.#limit = limit;
    this.#replay = replay;
    this.#watcher = watcher;
    this.#onTooLarge = onTooLarge;
    this.#current = new UpstreamBody(source);
    source.on('data', (chunk: Buffer) => this.#chunk(chunk));
    source.on('end', () => this.#end());
  }

  /** the stream the current upstream attempt reads */
  get body(): Readable {
    return this.#current;
  }

  /** the body crossed the limit */
  get tooLarge(): boolean {
    return this.#tooLarge;
  }

  /** The body again, for a second attempt: the chunks kept so far, then the rest as it arrives. */
  again(): Readable {
    const previous = this.#current;
    const next = new UpstreamBody(this.#source);
    for (const c of this.#replay.chunks) next.push(c);
    if (this.#source.readableEnded) next.push(null);
    this.#current = next;
    previous.destroy();
    return next;
  }

  #chunk(chunk: Buffer): void {
    if (this.#tooLarge) return;
    this.#received += chunk.length;
    if (this.#received > this.#limit) {
      this.#tooLarge = true;
      this.#current.destroy();
      this.#onTooLarge();
      return;
    }
    // the upstream does not keep up: hold the client until it reads again (UpstreamBody._read); a body the
    // upstream already let go of (its attempt ended) takes nothing, and the client must not wait for it
    const body = this.#current;
    if (!body.push(chunk) && !body.destroyed) this.#source.pause();
    this.#replay.record(chunk);
    this.#watcher?.requestChunk(chunk);
  }

  #end(): void {
    if (!this.#tooLarge) this.#current.push(null);
    this.#watcher?.requestEnd();
  }
}
