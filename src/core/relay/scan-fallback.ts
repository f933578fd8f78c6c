// Where the relay's reading of CTX exchanges left its fast path (kvsentinel_relay_scan_fallbacks_total{server,reason}).
// Every slow path gives the same answers for more CPU, some of it on the event loop that forwards the router's bytes:
// each time one is taken it is counted, per request or response, so a relay that quietly runs slow is seen.

export const SCAN_FALLBACK_REASONS = [
  /** scanned on the relay's event loop: the scan thread cannot run (its compiled file is missing, as when the
   * sources run untranspiled) or it stopped earlier */
  'inline',
  /** the scan thread stopped with this request's or response's scan pending: read again on the event loop */
  'thread_stopped',
  /** not a flat id prompt the streaming scanner answers (several prompts, strings, an id past 32 bits, a kept member
   * over 64 KiB): the whole body decoded and parsed as text on the event loop */
  'text_path',
  /** the body did not fit the shared ring (the thread lagged a ring's worth, or the body is larger than the ring):
   * sent to the thread in a copy of its own */
  'body_copy',
  /** prompt ids (a request's or the worker's) did not fit the id ring: sent back in a buffer of their own */
  'ids_transferred',
  /** a JSON body's ids read byte by byte: WebAssembly is not available (node --jitless, a big-endian host) */
  'no_kernel',
  /** a JSON body's ids read by a kernel that copies the ring's bytes first: no shared WebAssembly memory */
  'kernel_copy',
] as const;

export type ScanFallbackReason = (typeof SCAN_FALLBACK_REASONS)[number];

export type ScanFallbackCounts = Readonly<Record<ScanFallbackReason, number>>;

/** What the operator reads in the log the first time a relay takes each slow path. */
export const SCAN_FALLBACK_MEANING: Readonly<Record<ScanFallbackReason, string>> = {
  inline: 'CTX bodies are read on the relay event loop: the scan thread is not available',
  thread_stopped: 'the scan thread stopped: pending scans are read again on the relay event loop',
  text_path: 'a CTX body is not a flat token-id prompt: it is parsed whole as text on the relay event loop',
  body_copy: 'a CTX body did not fit the scan ring: it went to the scan thread in a copy of its own',
  ids_transferred: 'prompt ids did not fit the id ring: they came back in a buffer of their own',
  no_kernel: 'WebAssembly is not available: prompt ids are read byte by byte',
  kernel_copy: 'shared WebAssembly memory is not available: the scan thread copies ring bytes before reading ids',
};

export const noScanFallbacks = (): Record<ScanFallbackReason, number> =>
  Object.fromEntries(SCAN_FALLBACK_REASONS.map((r) => [r, 0])) as Record<ScanFallbackReason, number>;
