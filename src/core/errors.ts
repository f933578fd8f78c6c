// Known failures carry a stable code: callers branch on the code (the CLI maps it to an exit code in one place,
// src/cli/exit-codes.ts) instead of catching one class to throw another with the same message.

export const ERROR_CODES = [
  /** a flag or argument the CLI cannot use */
  'usage',
  /** the serve configuration file is invalid (a flag's value is `usage`) */
  'config-invalid',
  /** a simulator setting (--preset, --set) is invalid */
  'sim-config-invalid',
  /** a tokenizer file is missing or malformed */
  'tokenizer-invalid',
  /** a recorded bundle cannot be read */
  'bundle-invalid',
  /** a source's read failed (reported on the status board, never to the CLI) */
  'source-read-failed',
  /** a request could not be rendered into token ids (counted per relay, never to the CLI) */
  'render-failed',
  /** sources or the web server did not start */
  'start-failed',
  /** an output file could not be written */
  'write-failed',
  /** a URL the command needs at start did not answer (a sidecar to attach to, a CTX server's /server_info) */
  'source-unreachable',
  /** an operation stopped on purpose (a relay exchange cancelled, its scan thread gone): never to the CLI */
  'cancelled',
  /** the stream's fast-path reader does not take this batch (the reference decoder decides): never to the CLI */
  'fast-path-declined',
  /** a value on the wire is malformed: its reader turns it into a named, counted issue, never to the CLI */
  'wire-value-invalid',
  /** the simulator's HTTP servers answer a request with an error status (400, 413, 500, 503): never to the CLI */
  'sim-request-failed',
  /** a simulated CTX worker is down (restarting): its server answers 503, as a real one refuses connections */
  'sim-worker-down',
  /** a caller broke an internal contract (a bug, not the user's input): the CLI rethrows it with its stack */
  'internal',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

// eslint-disable-next-line no-restricted-syntax -- the one class that extends Error: every other error extends it
export class KvsentinelError extends Error {
  override readonly name: string = 'KvsentinelError';
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

export function isKvsentinelError(err: unknown): err is KvsentinelError {
  return err instanceof KvsentinelError;
}

/** The message of anything thrown, for one-line reports. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
