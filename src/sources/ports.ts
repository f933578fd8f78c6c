// What sources need from the daemon: where observations go, how to report their own health, a clock and a logger.
// Tests pass in-memory versions; the daemon wires the real state and status board.
import type { Observation } from '../core/observe/observation.js';

export interface ObservationSink {
  apply(observation: Observation): void;
}

export type Clock = () => number;

export interface Logger {
  /** detail for --log.level debug (every failed read, every source started); optional for small loggers */
  debug?(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** Fixed reasons for failed reads (label values of kvsentinel_source_errors_total). */
export const SOURCE_ERROR_REASONS = ['connect', 'timeout', 'http_status', 'parse', 'oversized', 'io', 'other'] as const;
export type SourceErrorReason = (typeof SOURCE_ERROR_REASONS)[number];

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
