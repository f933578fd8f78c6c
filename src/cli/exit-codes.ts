// The CLI's exit codes, and the one place a known error's code becomes one. An audit's own codes (1 findings,
// 3 evidence insufficient) come from its report (core/report/audit-report.ts).
import type { ErrorCode } from '../core/errors.js';

export const EXIT_USAGE = 2;

/** Every known failure is the user's to fix (a flag, a file, a setting): exit 2, the message on one line. */
const EXIT_BY_CODE: Readonly<Record<ErrorCode, number>> = {
  usage: EXIT_USAGE,
  'config-invalid': EXIT_USAGE,
  'sim-config-invalid': EXIT_USAGE,
  'tokenizer-invalid': EXIT_USAGE,
  'bundle-invalid': EXIT_USAGE,
  'source-read-failed': EXIT_USAGE,
  'render-failed': EXIT_USAGE,
  'start-failed': EXIT_USAGE,
  'write-failed': EXIT_USAGE,
};

export function exitCodeFor(code: ErrorCode): number {
  return EXIT_BY_CODE[code];
}
