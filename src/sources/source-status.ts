// Health and error counts of every configured source, read by the exporter (kvsentinel_up, source_errors_total,
// bad_input_total) and the landing page. Up/down transitions also go to the state as `source-health` observations,
// which feed the `source-unreachable` finding (every failure is reported, recoveries once).
import type { Clock, Logger, ObservationSink, SourceErrorReason, SourceReporter } from './ports.js';

export interface SourceStatus {
  readonly source: string;
  readonly up: boolean;
  /** false until the first read finished */
  readonly seen: boolean;
  readonly lastError: string | null;
  readonly lastOkAt: number | null;
  readonly lastErrorAt: number | null;
  readonly errors: Readonly<Partial<Record<SourceErrorReason, number>>>;
  readonly badInput: Readonly<Record<string, number>>;
  /** what a source that reads fine lacks (a quiet orchestrator log), null when nothing */
  readonly note?: string | null;
}

interface MutableStatus {
  up: boolean;
  seen: boolean;
  lastError: string | null;
  lastOkAt: number | null;
  lastErrorAt: number | null;
  errors: Partial<Record<SourceErrorReason, number>>;
  badInput: Record<string, number>;
  note: string | null;
}

const MAX_BAD_INPUT_CODES = 32;

export class SourceStatusBoard implements SourceReporter {
  readonly #sources = new Map<string, MutableStatus>();
  readonly #sink: ObservationSink;
  readonly #clock: Clock;
  readonly #logger: Logger | null;
  /** sources being stopped on purpose: their aborted reads are not faults */
  readonly #silenced = new Set<string>();
  #allSilenced = false;

  constructor(deps: { sink: ObservationSink; clock: Clock; logger?: Logger }) {
    this.#sink = deps.sink;
    this.#clock = deps.clock;
    this.#logger = deps.logger ?? null;
  }

  /** Declares a configured source so it is exported (as down) before its first read. */
  register(source: string): void {
    this.#silenced.delete(source);
    this.#init(source);
  }

  #init(source: string): void {
    if (!this.#sources.has(source)) {
      this.#sources.set(source, { up: false, seen: false, lastError: null, lastOkAt: null, lastErrorAt: null, errors: {}, badInput: {}, note: null });
    }
  }

  /** Removes a source that is no longer configured (after a reload). */
  unregister(source: string): void {
    this.#sources.delete(source);
    this.#silenced.delete(source);
  }

  /**
   * The owner is stopping `source` (or, without an argument, every source): reads it aborts from now on are the
   * shutdown, not a fault — no log line, no error count, no `source-health` observation (no source-unreachable).
   */
  silence(source?: string): void {
    if (source === undefined) this.#allSilenced = true;
    else this.#silenced.add(source);
  }

  ok(source: string): void {
    const s = this.#get(source);
    const changed = !s.up || !s.seen;
    if (!s.up && s.seen) this.#logger?.info(`source ${source} is up again`);
    s.up = true;
    s.seen = true;
    s.lastOkAt = this.#clock();
    if (changed) this.#sink.apply({ kind: 'source-health', ts: s.lastOkAt, source, up: true, error: null });
  }

  fail(source: string, reason: SourceErrorReason, message: string): void {
    if (this.#allSilenced || this.#silenced.has(source)) return;
    const s = this.#get(source);
    // log transitions and changed errors, not every failed poll
    if (s.up || !s.seen || s.lastError !== message) this.#logger?.warn(`source ${source} is down: ${message}`, { reason });
    else this.#logger?.debug?.(`source ${source} still down: ${message}`, { reason });
    s.up = false;
    s.seen = true;
    s.lastError = message;
    s.lastErrorAt = this.#clock();
    s.errors[reason] = (s.errors[reason] ?? 0) + 1;
    // every failure is reported: the state counts consecutive failures (source-unreachable after a few)
    this.#sink.apply({ kind: 'source-health', ts: s.lastErrorAt, source, up: false, error: message });
  }

  badInput(source: string, code: string, count = 1): void {
    const s = this.#get(source);
    // codes come from parsers (a fixed set), but cap them so a bug cannot explode label cardinality
    const key = code in s.badInput || Object.keys(s.badInput).length < MAX_BAD_INPUT_CODES ? code : 'other';
    s.badInput[key] = (s.badInput[key] ?? 0) + count;
  }

  note(source: string, text: string | null): void {
    const s = this.#get(source);
    if (text !== null && s.note !== text) this.#logger?.warn(`source ${source}: ${text}`);
    s.note = text;
  }

  list(): SourceStatus[] {
    return [...this.#sources].map(([source, s]) => ({ source, ...s, errors: { ...s.errors }, badInput: { ...s.badInput } }));
  }

  #get(source: string): MutableStatus {
    this.#init(source);
    return this.#sources.get(source) as MutableStatus;
  }
}
