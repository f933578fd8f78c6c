// What sources need from the daemon: where observations go, how to report their own health, a clock and a logger
// (the ports outputs share live in core/observe/ports.ts).
// Tests pass in-memory versions; the daemon wires the real state and status board.
import type { Logger, SourceErrorReason } from '../core/observe/ports.js';

export { type Clock, type Logger, type ObservationSink, type SourceErrorReason } from '../core/observe/ports.js';

/** How a source reports its own health; the status board implements it. */
export interface SourceReporter {
  /** a read of the source succeeded */
  ok(source: string): void;
  /** a read failed; the source is down until the next ok */
  fail(source: string, reason: SourceErrorReason, message: string): void;
  /** malformed items skipped inside an otherwise good read */
  badInput(source: string, code: string, count?: number): void;
  /** the source reads fine but says less than expected (e.g. a quiet log); null clears it */
  note?(source: string, text: string | null): void;
}

/** A source that runs until stopped. stop() is idempotent and resolves when in-flight work has finished. */
export interface RunningSource {
  readonly name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export const silentLogger: Logger = {
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};
