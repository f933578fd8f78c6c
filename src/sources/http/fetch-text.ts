// One bounded HTTP read of a source: a timeout for the whole exchange, a byte cap on the body (an oversized answer
// is aborted, not buffered) and failures classified into the fixed reasons of kvsentinel_source_errors_total.
import { errors, request, type Dispatcher } from 'undici';
import type { SourceErrorReason } from '../ports.js';
import { KvsentinelError } from '../../core/errors.js';

export interface FetchTextOptions {
  readonly method?: 'GET' | 'POST';
  readonly timeoutMs: number;
  readonly maxBytes: number;
  readonly dispatcher?: Dispatcher;
  readonly headers?: Record<string, string>;
  readonly body?: string;
  /** aborts the read when the owner stops */
  readonly signal?: AbortSignal;
}

export class SourceReadError extends KvsentinelError {
  override readonly name = 'SourceReadError';
  readonly reason: SourceErrorReason;

  constructor(reason: SourceErrorReason, message: string, options?: { cause?: unknown }) {
    super('source-read-failed', message, options);
    this.reason = reason;
  }
}

export interface FetchedText {
  readonly status: number;
  readonly contentType: string | null;
  readonly text: string;
}

export interface FetchedBytes {
  readonly status: number;
  readonly contentType: string | null;
  /** the body as received (no decode) */
  readonly bytes: Buffer;
}

export async function fetchText(url: string, options: FetchTextOptions): Promise<FetchedText> {
  const fetched = await fetchBytes(url, options);
  return { status: fetched.status, contentType: fetched.contentType, text: fetched.bytes.toString('utf8') };
}

/** fetchText without the decode: for bodies parsed straight from their bytes (`/kv_cache_events`). */
export async function fetchBytes(url: string, options: FetchTextOptions): Promise<FetchedBytes> {
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal !== undefined ? AbortSignal.any([timeout, options.signal]) : timeout;
  let response: Dispatcher.ResponseData;
  try {
    response = await request(url, {
      method: options.method ?? 'GET',
      signal,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      ...(options.headers !== undefined ? { headers: options.headers } : {}),
      ...(options.body !== undefined ? { body: options.body } : {}),
      ...(options.dispatcher !== undefined ? { dispatcher: options.dispatcher } : {}),
    });
  } catch (err) {
    throw classify(url, err, timeout);
  }
  const chunks: Buffer[] = [];
  let bytes = 0;
  try {
    for await (const chunk of response.body as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      if (bytes > options.maxBytes) {
        response.body.destroy();
        throw new SourceReadError('oversized', `${url}: response exceeds ${options.maxBytes} bytes`);
      }
      chunks.push(chunk);
    }
  } catch (err) {
    if (err instanceof SourceReadError) throw err;
    throw classify(url, err, timeout);
  }
  const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, bytes);
  if (response.statusCode < 200 || response.statusCode >= 300) {
    const text = body.subarray(0, 800).toString('utf8').slice(0, 200);
    throw new SourceReadError('http_status', `${url}: HTTP ${response.statusCode}${text !== '' ? `: ${text}` : ''}`);
  }
  const ct = response.headers['content-type'];
  return { status: response.statusCode, contentType: typeof ct === 'string' ? ct : null, bytes: body };
}

function classify(url: string, err: unknown, timeout: AbortSignal): SourceReadError {
  const reason = timeout.aborted ? 'timeout' : reasonOf(err);
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : String(err);
  const text = reason === 'timeout' ? 'timed out' : reason === 'connect' && typeof code === 'string' ? code : message;
  return new SourceReadError(reason, `${url}: ${text}`, { cause: err });
}

/** The fixed reason for any read error (undici, node or our own). */
export function reasonOf(err: unknown): SourceErrorReason {
  if (err instanceof SourceReadError) return err.reason;
  if (
    err instanceof errors.HeadersTimeoutError ||
    err instanceof errors.BodyTimeoutError ||
    err instanceof errors.ConnectTimeoutError
  )
    return 'timeout';
  if ((err as { name?: unknown } | null)?.name === 'TimeoutError') return 'timeout';
  const code = (err as { code?: unknown } | null)?.code;
  if (
    code === 'ECONNREFUSED' ||
    code === 'ECONNRESET' ||
    code === 'ENOTFOUND' ||
    code === 'EHOSTUNREACH' ||
    code === 'EAI_AGAIN' ||
    code === 'EPIPE' ||
    err instanceof errors.SocketError
  ) {
    return 'connect';
  }
  return 'other';
}
