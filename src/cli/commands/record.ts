// `kvsentinel record`: the source flags and --duration over the record use case (src/app/record.ts).
import type { Command } from 'commander';
import { parseDuration } from '../../app/config/serve-config.js';
import { recordBundle } from '../../app/record.js';
import { CliError } from '../cli-error.js';
import { createStderrLogger } from '../serve/logger.js';
import {
  addSourceOptions,
  hasSources,
  loadCliConfig,
  NO_SOURCE_MESSAGE,
  sourceFlags,
  type SourceOptionValues,
} from '../serve/source-flags.js';

interface RecordOptions extends SourceOptionValues {
  out: string;
  duration: string;
  includePrompts?: boolean;
}

export function registerRecordCommand(program: Command): void {
  const command = program
    .command('record')
    .description('record what the sources observe for --duration into a bundle for `audit --bundle`');
  addSourceOptions(command)
    .requiredOption('--out <dir>', 'bundle directory (created; must be empty)')
    .option('--duration <duration>', 'how long to record (e.g. 60s, 10m)', '60s')
    .option('--include-prompts', 'keep prompt token ids in the bundle (default: only the block digests the joins need)')
    .action(async (options: RecordOptions) => {
      const config = await loadCliConfig(sourceFlags(options));
      if (!hasSources(config)) throw new CliError(NO_SOURCE_MESSAGE);
      const durationMs = parseDuration('--duration', options.duration);
      const result = await recordBundle(config, {
        out: options.out,
        durationMs,
        includePrompts: options.includePrompts === true,
        logger: createStderrLogger({ level: 'warn' }),
      });
      process.stderr.write(`kvsentinel: recorded ${result.observations} observations to ${options.out}\n`);
    });
}
