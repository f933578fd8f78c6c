// `--time-scale`, which `sim serve` and `demo` share: one parser, one error.
import { CliError } from '../cli-error.js';

/** the seed preset's workload produces meaningful traffic in ~30–60 s at this speed */
export const DEFAULT_TIME_SCALE = 10;

/** `--time-scale X`: virtual seconds per real second, a positive number */
export function parseTimeScale(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n <= 0)
    throw new CliError(`--time-scale ${value}: expected a positive number (virtual seconds per real second)`);
  return n;
}
