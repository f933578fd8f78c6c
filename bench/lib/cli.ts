// The kvsentinel CLI as compiled by the bench (build/src/cli/main.js; `npm run bench` copies package.json into build/
// so the CLI finds its version): the documented, stable contract (docs/design.md §7) that the end-to-end sections drive,
// so they measure what an operator runs.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { runProcess } from './proc.js';
import { srcBuildDir } from './paths.js';

export const cliPath = join(srcBuildDir, 'cli/main.js');

/** null when `kvsentinel <command…> --help` works in this build, else why not (the section then reports "not measured"). */
export async function cliCommandMissing(command: readonly string[]): Promise<string | null> {
  if (!existsSync(cliPath)) return `${cliPath} not built`;
  const r = await runProcess(process.execPath, [cliPath, ...command, '--help'], { timeoutMs: 30_000 });
  // commander answers an unknown command's --help with the root help (exit 0), so look for the command's own usage
  if (r.code === 0 && r.stdout.includes(`Usage: kvsentinel ${command.join(' ')}`)) return null;
  return `\`kvsentinel ${command.join(' ')}\` is not in this build yet`;
}
