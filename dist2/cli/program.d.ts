import { Command } from 'commander';
export declare function buildProgram(): Command;
/** Runs the CLI and returns the exit code; never calls process.exit. */
export declare function runCli(argv: readonly string[]): Promise<number>;
