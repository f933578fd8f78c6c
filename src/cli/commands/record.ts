// `kvsentinel record`: the source flags and --duration over the record use case (src/app/record.ts), or --attach
// URL: a running sidecar's observation stream into the bundle (src/app/record-attached.ts), which owns no relay port.
import type { Command } from 'commander';
import { parseDuration } from '../../app/config/serve-config.js';
import { recordBundle, type RecordResult } from '../../app/record.js';
import { recordAttached } from '../../app/record-attached.js';
import { CliError } from '../cli-error.js';
import { EXIT_UNREACHABLE } from '../exit-codes.js';
import { addAttachOptions, attachTarget, type AttachOptionValues } from '../serve/attach-flags.js';
import { createStderrLogger } from '../serve/logger.js';
import {
  addSourceOptions,
  loadCliConfig,
  NO_SOURCE_MESSAGE,
  requireSources,
  sourceFlags,
  type SourceOptionValues,
} from '../serve/source-flags.js';

interface RecordOptions extends SourceOptionValues, AttachOptionValues {
  out: string;
  duration: string;
  includePrompts?: boolean;
}

export function registerRecordCommand(program: Command): void {
  const command = program
    .command('record')
    .description(
      'record what the sources (or a running sidecar, --attach) observe for --duration into a bundle for `audit --bundle`',
    );
  addAttachOptions(addSourceOptions(command))
    .requiredOption('--out <dir>', 'bundle directory (created; must be empty)')
    .option('--duration <duration>', 'how long to record (e.g. 60s, 10m)', '60s')
    .option('--include-prompts', 'keep prompt token ids in the bundle (default: only the block digests the joins need)')
    .action(async (options: RecordOptions) => {
      const durationMs = parseDuration('--duration', options.duration);
      const notice = (line: string): void => void process.stderr.write(`${line}\n`);
      const attach = attachTarget(options);
      let result: RecordResult;
      if (attach !== null) {
        // a sidecar's stream carries digests only: it never sends prompts
        if (options.includePrompts === true)
          throw new CliError('--include-prompts: not with --attach (a sidecar never sends prompts over its stream)');
        result = await recordAttached(attach.url, {
          out: options.out,
          durationMs,
          bearerToken: attach.bearerToken,
          notice,
        });
      } else {
        const config = await loadCliConfig(sourceFlags(options));
        requireSources(config, `${NO_SOURCE_MESSAGE}, or --attach URL (a running kvsentinel serve)`);
        result = await recordBundle(config, {
          out: options.out,
          durationMs,
          includePrompts: options.includePrompts === true,
          logger: createStderrLogger({ level: 'warn' }),
          notice,
        });
      }
      process.stderr.write(`kvsentinel: recorded ${result.observations} observations to ${options.out}\n`);
      if (result.unreachable !== null) {
        process.stderr.write(`kvsentinel: the bundle is partial: ${result.unreachable}\n`);
        process.exitCode = EXIT_UNREACHABLE;
      }
    });
}
