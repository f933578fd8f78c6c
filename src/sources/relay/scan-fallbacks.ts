// One relay's count of its slow paths (core/relay/scan-fallback.ts), cumulative; the first of each reason is logged
// once, with what it means, so a relay that runs slow says so where the operator looks first.
import {
  noScanFallbacks,
  SCAN_FALLBACK_MEANING,
  type ScanFallbackCounts,
  type ScanFallbackReason,
} from '../../core/relay/scan-fallback.js';
import type { Logger } from '../ports.js';

/** the slow paths of a machine or a failure, not of the load or the requests: warnings */
const ENVIRONMENT: ReadonlySet<ScanFallbackReason> = new Set(['inline', 'thread_stopped', 'no_kernel', 'kernel_copy']);

export class ScanFallbacks {
  readonly #counts = noScanFallbacks();
  readonly #logger: Logger | null;
  readonly #source: string;

  /** `logger` null: counted only (tests) */
  constructor(logger: Logger | null, source: string) {
    this.#logger = logger;
    this.#source = source;
  }

  count(reason: ScanFallbackReason, by = 1): void {
    if (by <= 0) return;
    if (this.#counts[reason] === 0 && this.#logger !== null) {
      const fields = { reason, counted: 'kvsentinel_relay_scan_fallbacks_total' };
      const message = `${this.#source}: ${SCAN_FALLBACK_MEANING[reason]} (logged once)`;
      if (ENVIRONMENT.has(reason)) this.#logger.warn(message, fields);
      else this.#logger.info(message, fields);
    }
    this.#counts[reason] += by;
  }

  counts(): ScanFallbackCounts {
    return { ...this.#counts };
  }
}
