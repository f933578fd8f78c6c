// A request body read on the relay's event loop, with the scan thread's scanner: CtxScanPool's scan when its thread
// cannot be used (a slow path, counted: `inline`, and `no_kernel` / `text_path` as the body is read).
import type { CtxBodyEncoding } from '../../core/relay/ctx-body-encoding.js';
import { createCtxBodyReader, type CtxBodyReader } from '../../core/relay/ctx-body-reader.js';
import type { CtxScanScratch } from '../../core/relay/ctx-request-scanner.js';
import type { HeaderBag } from '../../core/relay/ctx-request.js';
import type { CtxScan, ScannedRequest } from './ctx-scan-pool.js';
import type { ScanFallbacks } from './scan-fallbacks.js';

export class InlineScan implements CtxScan {
  readonly #scanner: CtxBodyReader;
  readonly #fallbacks: ScanFallbacks;

  constructor(encoding: CtxBodyEncoding, scratch: CtxScanScratch, fallbacks: ScanFallbacks) {
    this.#scanner = createCtxBodyReader(encoding, scratch);
    this.#fallbacks = fallbacks;
    if (encoding === 'json' && scratch.kernel === null) fallbacks.count('no_kernel');
  }

  feed(chunk: Uint8Array): void {
    this.#scanner.feed(chunk);
  }

  finish(headers: HeaderBag): Promise<ScannedRequest | null> {
    const info = this.#scanner.finish(headers);
    if (info === null) this.#fallbacks.count('text_path');
    // on the event loop anyway: the digest computes the fingerprints as it would have
    return Promise.resolve(info === null ? null : { info, promptFingerprints: null });
  }

  drop(): void {
    // nothing held
  }
}
