// `kvsentinel audit` with the daemon's source flags: the flags and --duration, over the live audit use case.
import type { Command } from 'commander';
import { runLiveAudit, type LiveAuditResult } from '../../app/audit/live-audit.js';
import { parseDuration } from '../../app/config/serve-config.js';
import { createStderrLogger } from './logger.js';
import { addSourceOptions, loadCliConfig, NO_SOURCE_MESSAGE, requireSources, sourceFlags } from './source-flags.js';

export const liveAudit = {
  addOptions(command: Command): void {
    addSourceOptions(command).option(
      '--duration <duration>',
      'how long to watch live sources or the --attach sidecar (e.g. 30s, 5m)',
      '30s',
    );
  },

  async run(
    _command: Command,
    options: Record<string, unknown>,
    progress: (line: string) => void,
  ): Promise<LiveAuditResult> {
    const config = await loadCliConfig(sourceFlags(options));
    requireSources(
      config,
      `give --bundle DIR, --attach URL (a running kvsentinel serve) or live sources (${NO_SOURCE_MESSAGE.replace('no source configured: give ', '')})`,
    );
    const durationMs = parseDuration('--duration', options['duration']);
    return runLiveAudit(config, {
      durationMs,
      logger: createStderrLogger({ level: 'warn' }),
      progress,
      // always said (not a progress line): the exit waits for these
      notice: (line) => void process.stderr.write(`${line}\n`),
    });
  },
};
