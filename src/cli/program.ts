import { Command, CommanderError } from 'commander';
import { errorMessage, isKvsentinelError } from '../core/errors.js';
import { EXIT_CODES_HELP, EXIT_USAGE, exitCodeFor } from './exit-codes.js';
import { registerAuditCommand } from './commands/audit.js';
import { registerDemoCommand } from './commands/demo.js';
import { registerHashCommand } from './commands/hash.js';
import { registerRecordCommand } from './commands/record.js';
import { registerServeCommand } from './commands/serve.js';
import { liveAudit } from './serve/live-audit.js';
import { registerSimCommand } from './commands/sim.js';
import { registerSimKeysCommand } from './commands/sim-keys.js';
import { registerSimServeCommand } from './commands/sim-serve.js';
import { registerTailCommand } from './commands/tail.js';
import { VERSION } from '../app/version.js';

export function buildProgram(): Command {
  const program = new Command('kvsentinel')
    .description('Diagnose a KV-cache-aware LLM router (TensorRT-LLM disaggregated serving) from the outside.')
    .version(VERSION)
    .addHelpText('after', EXIT_CODES_HELP)
    .exitOverride();
  registerDemoCommand(program);
  registerHashCommand(program);
  registerAuditCommand(program, liveAudit);
  registerServeCommand(program);
  registerRecordCommand(program);
  registerTailCommand(program);
  registerSimCommand(program);
  registerSimServeCommand(program);
  registerSimKeysCommand(program);
  oneLineUsageErrors(program, 'kvsentinel');
  return program;
}

/**
 * A usage error is one line, and the last one: what is wrong, then where the usage is (`--help`), never the whole
 * help text after it (which pushes the error off the screen).
 */
function oneLineUsageErrors(command: Command, path: string): void {
  command.configureOutput({
    outputError: (text, write) => write(`${path}: ${text.replace(/^error: /, '').trimEnd()} (see '${path} --help')\n`),
  });
  for (const sub of command.commands) oneLineUsageErrors(sub, `${path} ${sub.name()}`);
}

/** Runs the CLI and returns the exit code; never calls process.exit. */
export async function runCli(argv: readonly string[]): Promise<number> {
  const program = buildProgram();
  // a command's own errors name it: `kvsentinel serve: …`
  let where = 'kvsentinel';
  program.hook('preAction', (_root, action) => {
    const names: string[] = [];
    for (let c: Command | null = action; c !== null && c !== program; c = c.parent) names.unshift(c.name());
    where = ['kvsentinel', ...names].join(' ');
  });
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version exit through here with code 0
      return err.exitCode === 0 ? 0 : EXIT_USAGE;
    }
    const exitCode = isKvsentinelError(err) ? exitCodeFor(err.code) : null;
    if (exitCode === null) throw err;
    // an error about a flag is a usage error: say where the usage is
    const message = errorMessage(err);
    const hint = message.startsWith('--') ? ` (see '${where} --help')` : '';
    process.stderr.write(`${where}: ${message}${hint}\n`);
    return exitCode;
  }
}
