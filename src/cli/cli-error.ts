// A known, user-facing failure of a flag or argument: the CLI prints its message on one line and exits 2
// (src/cli/exit-codes.ts).
import { KvsentinelError } from '../core/errors.js';

export class CliError extends KvsentinelError {
  override readonly name = 'CliError';

  constructor(message: string, options?: { cause?: unknown }) {
    super('usage', message, options);
  }
}
