// Whether each source reads fine, since when it has not, and how many reads in a row failed: the one representation
// of source health. The state keeps one fed by `source-health` observations (the `source-unreachable` rule reads
// it, in a daemon and from a bundle alike); the daemon's SourceStatusBoard keeps one fed by its sources' reads.
// Pure: times are parameters.
import type { SourceDiagnosis } from '../diagnosis/rule.js';

export interface SourceHealth {
  readonly up: boolean;
  /** false until the first read finished (a registered source is down until then) */
  readonly seen: boolean;
  /** the latest failure's message, kept after a recovery */
  readonly lastError: string | null;
  readonly lastOkAt: number | null;
  /** the latest failed read, kept after a recovery */
  readonly lastErrorAt: number | null;
  /** since when the source has been down; null while up */
  readonly downSince: number | null;
  /** failed reads since the last good one */
  readonly failures: number;
}

type MutableHealth = { -readonly [K in keyof SourceHealth]: SourceHealth[K] };

export class SourceHealthBoard {
  readonly #sources = new Map<string, MutableHealth>();
  readonly #maxSources: number;
  #ignored = 0;

  /** maxSources: past it, reports of new sources are ignored (counted) */
  constructor(maxSources = Number.POSITIVE_INFINITY) {
    this.#maxSources = maxSources;
  }

  /** reports of sources past maxSources, ignored */
  get ignored(): number {
    return this.#ignored;
  }

  /** Declares a source (down, not yet seen); false when it is past maxSources. */
  register(source: string): boolean {
    if (this.#sources.has(source)) return true;
    if (this.#sources.size >= this.#maxSources) return false;
    this.#sources.set(source, {
      up: false,
      seen: false,
      lastError: null,
      lastOkAt: null,
      lastErrorAt: null,
      downSince: null,
      failures: 0,
    });
    return true;
  }

  remove(source: string): void {
    this.#sources.delete(source);
  }

  /**
   * A read of `source` finished at `ts`: fine (up) or failed with `error`. Returns whether the source changed
   * between up and down (its first report counts as a change); false for a source ignored past maxSources.
   */
  report(ts: number, source: string, up: boolean, error: string | null): boolean {
    if (!this.register(source)) {
      this.#ignored++;
      return false;
    }
    const h = this.#sources.get(source)!;
    const changed = !h.seen || h.up !== up;
    if (up) {
      h.up = true;
      h.downSince = null;
      h.failures = 0;
      h.lastOkAt = ts;
    } else {
      if (h.up || !h.seen) h.downSince = ts;
      h.up = false;
      h.lastError = error;
      h.lastErrorAt = ts;
      h.failures++;
    }
    h.seen = true;
    return changed;
  }

  get(source: string): SourceHealth | undefined {
    return this.#sources.get(source);
  }

  /** Every source, in the order first declared or reported. */
  entries(): IterableIterator<[string, SourceHealth]> {
    return this.#sources.entries();
  }

  /** What the rules read: every source that reported, sorted by name. */
  diagnosis(): SourceDiagnosis[] {
    return [...this.#sources]
      .filter(([, h]) => h.seen)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([source, h]) => ({
        source,
        up: h.up,
        error: h.up ? null : h.lastError,
        downSince: h.downSince,
        lastFailure: h.up ? null : h.lastErrorAt,
        failures: h.failures,
      }));
  }
}
