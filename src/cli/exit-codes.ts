// The CLI's exit codes (docs/design.md §7), and the one place a known error's code becomes one. An audit's own
// codes (1 findings, 3 evidence insufficient, 5 a source unreachable) come from its report (core/report/audit-report.ts).
import type { ErrorCode } from '../core/errors.js';
import { EXIT_SOURCE_UNREACHABLE } from '../core/report/audit-report.js';

/** the command line: a flag or argument (or a flag's value: --relay, --duration, --set…) the command cannot use */
export const EXIT_USAGE = 2;
/** a file the command reads is invalid: the configuration file, a tokenizer, a bundle */
export const EXIT_INVALID_INPUT = 4;
/** a URL the command needs did not answer (the audit's code for a source-unreachable finding) */
export const EXIT_UNREACHABLE = EXIT_SOURCE_UNREACHABLE;
/** a port to listen on or an output file is not available */
export const EXIT_CANNOT_START = 6;

/** Each known failure's exit code; null: not the user's to fix (a bug), rethrown with its stack. */
const EXIT_BY_CODE: Readonly<Record<ErrorCode, number | null>> = {
  usage: EXIT_USAGE,
  'config-invalid': EXIT_INVALID_INPUT,
  'sim-config-invalid': EXIT_USAGE,
  'tokenizer-invalid': EXIT_INVALID_INPUT,
  'bundle-invalid': EXIT_INVALID_INPUT,
  'source-unreachable': EXIT_UNREACHABLE,
  'source-read-failed': EXIT_UNREACHABLE,
  'start-failed': EXIT_CANNOT_START,
  'write-failed': EXIT_CANNOT_START,
  'render-failed': EXIT_INVALID_INPUT,
  cancelled: null,
  'fast-path-declined': null,
  'wire-value-invalid': null,
  'sim-request-failed': null,
  'sim-worker-down': null,
  internal: null,
};

/** The table in `kvsentinel --help` (docs/design.md §7 says the same at length). */
export const EXIT_CODES_HELP = `
Exit codes:
  0  done (audit: nothing at or above --fail-on, and evidence for the verdict)
  1  audit, demo --fail-on: a finding at or above --fail-on
  2  usage: an unknown command or flag, a flag's value, flags that conflict
  3  audit: nothing at or above --fail-on, but too little evidence for an all-clear
  4  invalid input: the configuration file, a tokenizer, a bundle
  5  unreachable: a URL the command needs did not answer (a live audit's or record's source, --attach, tail)
  6  cannot start or write: a port to listen on, an output (--out, --report)`;

export function exitCodeFor(code: ErrorCode): number | null {
  return EXIT_BY_CODE[code];
}
