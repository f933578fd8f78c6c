// The ports sources and outputs share: where observations go, time, logs, and a source's health as the status board
// reports it. Types only (and the fixed error reasons), here so both adapters import them from the core and neither
// imports the other.
import type { Observation } from './observation.js';

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

/** One configured source's health and error counts (the status board's row; kvsentinel_up and the landing page). */
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
