// Health and error counts of every configured source, read by the exporter (kvsentinel_up, source_errors_total,
// bad_input_total) and the landing page. Health is the core's SourceHealthBoard (the state keeps the same board, fed
// by the `source-health` observations this one sends: every failure, recoveries once), beside it the error and
// bad-input counts by reason and a note.
import { SourceHealthBoard } from '../core/state/source-health-board.js';
import type { SourceStatus } from '../core/observe/ports.js';
import type { Clock, Logger, ObservationSink, SourceErrorReason, SourceReporter } from './ports.js';

export type { SourceStatus } from '../core/observe/ports.js';

/** What the status board keeps beside health. */
interface SourceCounts {
  readonly errors: Partial<Record<SourceErrorReason, number>>;
  readonly badInput: Record<string, number>;
  note: string | null;
}

const MAX_BAD_INPUT_CODES = 32;

export class SourceStatusBoard implements SourceReporter {
  readonly #health = new SourceHealthBoard();
  readonly #counts = new Map<string, SourceCounts>();
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
    this.#declare(source);
  }

  /** Removes a source that is no longer configured (after a reload). */
  unregister(source: string): void {
    this.#health.remove(source);
    this.#counts.delete(source);
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
    this.#declare(source);
    const before = this.#health.get(source);
    if (before !== undefined && !before.up && before.seen) this.#logger?.info(`source ${source} is up again`);
    const ts = this.#clock();
    if (this.#health.report(ts, source, true, null))
      this.#sink.apply({ kind: 'source-health', ts, source, up: true, error: null });
  }

  fail(source: string, reason: SourceErrorReason, message: string): void {
    if (this.#allSilenced || this.#silenced.has(source)) return;
    const counts = this.#declare(source);
    const before = this.#health.get(source);
    // log transitions and changed errors, not every failed poll
    if (before === undefined || before.up || !before.seen || before.lastError !== message)
      this.#logger?.warn(`source ${source} is down: ${message}`, { reason });
    else this.#logger?.debug?.(`source ${source} still down: ${message}`, { reason });
    const ts = this.#clock();
    this.#health.report(ts, source, false, message);
    counts.errors[reason] = (counts.errors[reason] ?? 0) + 1;
    // every failure is reported: the state counts consecutive failures (source-unreachable after a few)
    this.#sink.apply({ kind: 'source-health', ts, source, up: false, error: message });
  }

  badInput(source: string, code: string, count = 1): void {
    const s = this.#declare(source);
    // codes come from parsers (a fixed set), but cap them so a bug cannot explode label cardinality
    const key = code in s.badInput || Object.keys(s.badInput).length < MAX_BAD_INPUT_CODES ? code : 'other';
    s.badInput[key] = (s.badInput[key] ?? 0) + count;
  }

  note(source: string, text: string | null): void {
    const s = this.#declare(source);
    if (text !== null && s.note !== text) this.#logger?.warn(`source ${source}: ${text}`);
    s.note = text;
  }

  /** every source, by name: the order sources first reported in is a race (ranks, relays starting together) */
  list(): SourceStatus[] {
    const names = [...this.#health.entries()].map(([source]) => source).sort();
    return names.map((source) => {
      const h = this.#health.get(source)!;
      const c = this.#counts.get(source)!;
      return {
        source,
        up: h.up,
        seen: h.seen,
        lastError: h.lastError,
        lastOkAt: h.lastOkAt,
        lastErrorAt: h.lastErrorAt,
        errors: { ...c.errors },
        badInput: { ...c.badInput },
        note: c.note,
      };
    });
  }

  /** The source's counts, declaring it (down, not yet seen) on first use. */
  #declare(source: string): SourceCounts {
    this.#health.register(source);
    let counts = this.#counts.get(source);
    if (counts === undefined) {
      counts = { errors: {}, badInput: {}, note: null };
      this.#counts.set(source, counts);
    }
    return counts;
  }
}
