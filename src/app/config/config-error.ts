// An invalid serve configuration (file or flags): the message names the file and key, or the flag, it came from.
import { KvsentinelError, type ErrorCode } from '../../core/errors.js';

export class ConfigError extends KvsentinelError {
  override readonly name = 'ConfigError';

  /**
   * The code follows the input the message names first: a flag (`--relay '…': …`) is the command line's (usage), a
   * file's key (`FILE: key: …`) the configuration's; `code` says otherwise (a file a flag names, e.g. a tokenizer).
   */
  constructor(message: string, options?: { cause?: unknown; code?: ErrorCode }) {
    super(options?.code ?? (message.startsWith('--') ? 'usage' : 'config-invalid'), message, options);
  }
}
