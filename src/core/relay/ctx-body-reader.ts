// One CTX request body read as it streams through the relay, whatever its encoding: JSON is scanned chunk by chunk
// (CtxRequestScanner), msgpack is collected and decoded once it ended (@msgpack/msgpack, 64-bit integers as bigint),
// an encoding the relay cannot decode is only counted. The relay feeds the bytes it already bounded by
// relay.capture_max_bytes; this runs on the scan thread.
import { decode } from '@msgpack/msgpack';
import type { CtxBodyEncoding } from './ctx-body-encoding.js';
import { unreadableCtxRequest, type CtxRequestInfo, type HeaderBag } from './ctx-request.js';
import { ctxInfoFromValue } from './ctx-request-object.js';
import { CtxRequestScanner, type CtxScanScratch } from './ctx-request-scanner.js';

export interface CtxBodyReader {
  feed(chunk: Uint8Array): void;
  /** the request info once the body ended; null when a JSON body needs parseCtxRequest's text path */
  finish(headers: HeaderBag): CtxRequestInfo | null;
}

class MsgpackBodyReader implements CtxBodyReader {
  readonly #chunks: Uint8Array[] = [];
  #bytes = 0;

  feed(chunk: Uint8Array): void {
    this.#chunks.push(chunk);
    this.#bytes += chunk.length;
  }

  finish(headers: HeaderBag): CtxRequestInfo {
    const body = this.#chunks.length === 1 ? (this.#chunks[0] as Uint8Array) : new Uint8Array(this.#bytes);
    if (this.#chunks.length !== 1) {
      let at = 0;
      for (const c of this.#chunks) {
        body.set(c, at);
        at += c.length;
      }
    }
    let value: unknown;
    try {
      value = decode(body, { useBigInt64: true });
    } catch {
      return unreadableCtxRequest('malformed', headers);
    }
    return ctxInfoFromValue(value, headers);
  }
}

class UndecodableBodyReader implements CtxBodyReader {
  feed(): void {
    // nothing to read
  }

  finish(headers: HeaderBag): CtxRequestInfo {
    return unreadableCtxRequest('unknown_encoding', headers);
  }
}

/** `scratch`: the caller's id kernel and scratch (one per thread or relay) */
export function createCtxBodyReader(encoding: CtxBodyEncoding, scratch: CtxScanScratch): CtxBodyReader {
  switch (encoding) {
    case 'json':
      return new CtxRequestScanner(scratch);
    case 'msgpack':
      return new MsgpackBodyReader();
    case 'unknown':
      return new UndecodableBodyReader();
  }
}
