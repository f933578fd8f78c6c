import { U64_MAX, decimalFitsU64 } from '../core/wire/u64-decimal.js';
import { CliError } from './cli-error.js';

/** Parses an unsigned 64-bit option value (decimal or 0x-hex), naming the option on error. */
export function parseU64Option(name: string, value: string): bigint {
  if (!/^(?:\d+|0x[0-9a-fA-F]+)$/.test(value))
    throw new CliError(`${name}: '${value}' is not an unsigned 64-bit integer`);
  const fits = value.startsWith('0x') ? BigInt(value) <= U64_MAX : decimalFitsU64(value);
  if (!fits) throw new CliError(`${name}: '${value}' exceeds 2^64-1`);
  return BigInt(value);
}

export function parsePositiveIntOption(name: string, value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || !Number.isSafeInteger(Number(value))) {
    throw new CliError(`${name}: '${value}' is not a positive integer`);
  }
  return Number(value);
}
