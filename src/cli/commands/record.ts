// `kvsentinel record`: runs the same sources as `serve` (relay ports included) for --duration and writes every
// observation to a bundle (docs/design.md §7) that `kvsentinel audit --bundle DIR` replays offline.
import type { Command } from 'commander';
import { createSentinelState } from '../../core/state/sentinel-state.js';
import { BundleWriter } from '../../outputs/bundle-writer.js';
import { CliError } from '../cli-error.js';
import { ConfigError, parseDuration } from '../serve/config.js';
import { createDaemon } from '../serve/daemon.js';
import { createStderrLogger } from '../serve/logger.js';
import { addSourceOptions, hasSources, loadCliConfig, NO_SOURCE_MESSAGE, sourceFlags, type SourceOptionValues } from '../serve/source-flags.js';
import { VERSION } from '../version.js';

interface RecordOptions extends SourceOptionValues {
  out: string;
  duration: string;
  includePrompts?: boolean;
}

export function registerRecordCommand(program: Command): void {
  const command = program.command('record').description('record what the sources observe for --duration into a bundle for `audit --bundle`');
  addSourceOptions(command)
    .requiredOption('--out <dir>', 'bundle directory (created; must be empty)')
    .option('--duration <duration>', 'how long to record (e.g. 60s, 10m)', '60s')
    .option('--include-prompts', 'keep prompt token ids in the bundle (default: only the block digests the joins need)')
    .action(async (options: RecordOptions) => {
      const config = await loadCliConfig(sourceFlags(options));
      if (!hasSources(config)) throw new CliError(NO_SOURCE_MESSAGE);
      let durationMs: number;
      try {
        durationMs = parseDuration('--duration', options.duration);
      } catch (err) {
        if (err instanceof ConfigError) throw new CliError(err.message);
        throw err;
      }
      const mode = config.ctx.some((c) => c.events === 'exclusive') ? 'exclusive' : config.relays.length > 0 ? 'relay' : 'watch';
      let writer: BundleWriter;
      try {
        writer = await BundleWriter.create(options.out, { mode, version: VERSION, includePrompts: options.includePrompts === true });
      } catch (err) {
        throw new CliError(`--out ${options.out}: ${err instanceof Error ? err.message : String(err)}`);
      }
      const state = createSentinelState({ mode: mode === 'exclusive' ? 'exclusive' : 'auto', windowMs: null, limits: { tableBlocksPerServer: config.state.maxTableBlocks } });
      let writeError: Error | null = null;
      const daemon = createDaemon(config, {
        web: false,
        logger: createStderrLogger({ level: 'warn' }),
        createState: () => ({
          apply(o) {
            if (writeError !== null) return;
            try {
              writer.write(o);
            } catch (err) {
              writeError = err instanceof Error ? err : new Error(String(err));
            }
          },
          snapshot: (now) => state.snapshot(now),
          subscribe: (listener) => state.subscribe(listener),
        }),
      });
      try {
        await daemon.start();
      } catch (err) {
        await daemon.stop();
        await writer.close();
        throw new CliError(`cannot start the sources: ${err instanceof Error ? err.message : String(err)}`);
      }
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          process.off('SIGINT', done);
          resolve();
        };
        const timer = setTimeout(done, durationMs);
        process.once('SIGINT', done); // Ctrl-C ends the recording early; the bundle stays complete
      });
      await daemon.stop();
      const manifest = await writer.close();
      if (writeError !== null) throw new CliError(`--out ${options.out}: ${(writeError as Error).message}`);
      process.stderr.write(`kvsentinel: recorded ${manifest.observations ?? writer.observations} observations to ${options.out}\n`);
    });
}
