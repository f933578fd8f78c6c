// An invalid serve configuration (file or flags): the message names the file and key, or the flag, it came from.
import { KvsentinelError } from '../../core/errors.js';

export class ConfigError extends KvsentinelError {
  override readonly name = 'ConfigError';

  constructor(message: string, options?: { cause?: unknown }) {
    super('config-invalid', message, options);
  }
}
