import { Command, CommanderError } from 'commander';
import { CliError, EXIT_USAGE } from './cli-error.js';
import { registerAuditCommand } from './commands/audit.js';
import { registerDemoCommand } from './commands/demo.js';
import { registerHashCommand } from './commands/hash.js';
import { registerRecordCommand } from './commands/record.js';
import { registerServeCommand } from './commands/serve.js';
import { liveAudit } from './serve/live-audit.js';
import { registerSimCommand } from './commands/sim.js';
import { registerSimServeCommand } from './commands/sim-serve.js';
import { registerTailCommand } from './commands/tail.js';
import { VERSION } from './version.js';

export function buildProgram(): Command {
  const program = new Command('kvsentinel')
    .description('Diagnose a KV-cache-aware LLM router (TensorRT-LLM disaggregated serving) from the outside.')
    .version(VERSION)
    .showHelpAfterError()
    .exitOverride();
  registerHashCommand(program);
  registerAuditCommand(program, liveAudit);
  registerServeCommand(program);
  registerRecordCommand(program);
  registerTailCommand(program);
  registerSimCommand(program);
  registerSimServeCommand(program);
  registerDemoCommand(program);
  return program;
}

/** Runs the CLI and returns the exit code; never calls process.exit. */
export async function runCli(argv: readonly string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version exit through here with code 0
      return err.exitCode === 0 ? 0 : EXIT_USAGE;
    }
    if (err instanceof CliError) {
      process.stderr.write(`kvsentinel: ${err.message}\n`);
      return EXIT_USAGE;
    }
    throw err;
  }
}
