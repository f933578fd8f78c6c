// One chalk instance for the reporters: no colour when NO_COLOR is set (any value, https://no-color.org) or the
// stream is not a terminal; FORCE_COLOR is left to chalk.
import { Chalk, type ChalkInstance } from 'chalk';

export function colorFor(stream: { readonly isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): ChalkInstance {
  const noColor = env.NO_COLOR !== undefined && env.NO_COLOR !== '';
  if (noColor || stream.isTTY !== true) return new Chalk({ level: 0 });
  return new Chalk();
}
