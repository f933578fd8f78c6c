// Small helpers for the live simulator's node:http servers: bounded body reading, JSON/text replies, listening on a
// port (0 = any) and closing with every open connection destroyed, so a restart or a shutdown never hangs.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Readable } from 'node:stream';
import { KvsentinelError } from '../../core/errors.js';

export class HttpError extends KvsentinelError {
  override readonly name = 'HttpError';
  readonly status: number;

  constructor(status: number, message: string) {
    super('sim-request-failed', message);
    this.status = status;
  }
}

/**
 * A request body for undici that is handed over once and then let go of. undici keeps a string or Buffer body (a
 * string as a copy) referenced until the response has ended: for a long prompt waiting in a worker's queue, one more
 * copy of it at every hop. Send it with a `content-length` header of `length`.
 */
export function sendOnce(payload: string | Uint8Array): { readonly body: Readable; readonly length: number } {
  let pending: string | Uint8Array | null = payload;
  const length = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.byteLength;
  function* once(): Generator<Uint8Array> {
    const chunk = typeof pending === 'string' ? Buffer.from(pending) : pending;
    pending = null;
    if (chunk !== null && chunk.byteLength > 0) yield chunk;
  }
  return { body: Readable.from(once(), { objectMode: false }), length };
}

/** the request body as bytes; 413 beyond `limitBytes` */
export async function readBodyBytes(req: IncomingMessage, limitBytes = 64 * 1024 * 1024): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limitBytes) throw new HttpError(413, `request body larger than ${limitBytes} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** the request body as text; 413 beyond `limitBytes` */
export async function readBody(req: IncomingMessage, limitBytes = 64 * 1024 * 1024): Promise<string> {
  return (await readBodyBytes(req, limitBytes)).toString('utf8');
}

export function sendText(res: ServerResponse, status: number, body: string, contentType: string): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** `body` is already JSON text (so 64-bit hashes can be written exactly) */
export function sendJsonText(res: ServerResponse, status: number, body: string): void {
  sendText(res, status, body, 'application/json');
}

export function sendError(res: ServerResponse, status: number, message: string): void {
  sendJsonText(
    res,
    status,
    JSON.stringify({
      object: 'error',
      message,
      type: status >= 500 ? 'InternalServerError' : 'BadRequestError',
      code: status,
    }),
  );
}

export function startSse(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
}

export function sseData(res: ServerResponse, data: string): void {
  if (!res.destroyed) res.write(`data: ${data}\n\n`);
}

export type Handler = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void> | void;

/** Routes are keyed `METHOD /path`; anything else answers 404 naming the route. */
export function dispatch(
  routes: Readonly<Record<string, Handler>>,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<void> | void {
  const route = `${req.method ?? 'GET'} ${url.pathname}`;
  const handler = Object.hasOwn(routes, route) ? routes[route] : undefined;
  return handler !== undefined ? handler(req, res, url) : sendError(res, 404, `${route}: not found`);
}

/** A node:http server that knows its open sockets, can stop and start listening again on the same port. */
export class LiveHttpServer {
  readonly host: string;
  #port: number;
  #server: Server | null = null;
  readonly #sockets = new Set<Socket>();
  readonly #handler: Handler;
  readonly #keepAliveTimeoutMs: number;

  /** `keepAliveTimeoutMs`: idle keep-alive connections are closed after this (trtllm-serve: 5 s) */
  constructor(host: string, port: number, handler: Handler, keepAliveTimeoutMs = 60_000) {
    this.host = host;
    this.#port = port;
    this.#handler = handler;
    this.#keepAliveTimeoutMs = keepAliveTimeoutMs;
  }

  get port(): number {
    return this.#port;
  }

  get listening(): boolean {
    return this.#server !== null;
  }

  /** host:port as a TensorRT-LLM server list names it */
  get address(): string {
    return `${this.host.includes(':') ? `[${this.host}]` : this.host}:${this.#port}`;
  }

  get url(): string {
    return `http://${this.address}`;
  }

  async listen(): Promise<void> {
    if (this.#server !== null) return;
    const server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      Promise.resolve()
        .then(() => this.#handler(req, res, url))
        .catch((err: unknown) => {
          if (err instanceof HttpError) sendError(res, err.status, err.message);
          else sendError(res, 500, err instanceof Error ? err.message : String(err));
        });
    });
    server.keepAliveTimeout = this.#keepAliveTimeoutMs;
    server.on('connection', (socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.#port, this.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.#port = (server.address() as AddressInfo).port;
    this.#server = server;
  }

  /** stops listening and destroys every open connection (clients see resets, then connection refused) */
  async close(): Promise<void> {
    const server = this.#server;
    if (server === null) return;
    this.#server = null;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of this.#sockets) socket.destroy();
    this.#sockets.clear();
    await closed;
  }
}
