// `kvsentinel serve`: the sidecar daemon (docs/design.md §7). Flags and/or a YAML/JSON config file; SIGHUP and
// POST /-/reload re-read the file (an invalid one is rejected and the old one kept); SIGTERM/SIGINT stop gracefully.
import type { Command } from 'commander';
import { CliError } from '../cli-error.js';
import { createDaemon } from '../../app/daemon/daemon.js';
import { createStderrLogger, LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from '../serve/logger.js';
import {
  addSourceOptions,
  loadCliConfig,
  requireSources,
  sourceFlags,
  type SourceOptionValues,
} from '../serve/source-flags.js';

interface ServeOptions extends SourceOptionValues {
  'config.check'?: boolean;
  'log.level'?: string;
  'log.format'?: string;
  'relay.maxRequestBytes'?: string;
}

export function registerServeCommand(program: Command): void {
  const command = program
    .command('serve')
    .description('run the sidecar: relay ports, watch sources, /metrics, /ws live feed, landing page at /');
  addSourceOptions(command)
    .option('--config.check', 'validate the configuration and exit (0 valid, 4 an invalid file, 2 an invalid flag)')
    .option(
      '--web.listen-address <host:port>',
      'metrics, health, live feed and landing page (default 0.0.0.0:9464: Prometheus scrapes the pod IP)',
    )
    .option(
      '--web.bearer-token-file <path>',
      'require Authorization: Bearer <token> (first line of the file) for /ws and POST /-/reload; /metrics and health stay open',
    )
    .option(
      '--relay.max-request-bytes <size>',
      'largest request body a relay forwards (e.g. 64MiB, the default); larger ones get 413 (relay.max_request_bytes)',
    )
    .option('--log.level <level>', LOG_LEVELS.join(' | '), 'info')
    .option(
      '--log.format <format>',
      `${LOG_FORMATS.join(' | ')}: one logfmt line or one JSON object per message on stderr`,
      'logfmt',
    )
    .action(async (options: ServeOptions) => {
      const level = options['log.level'] as LogLevel;
      if (!LOG_LEVELS.includes(level))
        throw new CliError(`--log.level '${String(level)}': expected ${LOG_LEVELS.join(', ')}`);
      const format = options['log.format'] as LogFormat;
      if (!LOG_FORMATS.includes(format))
        throw new CliError(`--log.format '${String(format)}': expected ${LOG_FORMATS.join(' or ')}`);
      const maxRequestBytes = options['relay.maxRequestBytes'];
      const flags = {
        ...sourceFlags(options),
        ...(maxRequestBytes !== undefined ? { relayMaxRequestBytes: maxRequestBytes } : {}),
      };
      const load = () => loadCliConfig(flags);
      const config = await load();
      // --config.check says what serve would say: a configuration without a source is refused
      requireSources(config);
      if (options['config.check'] === true) {
        process.stdout.write('configuration is valid\n');
        return;
      }
      const logger = createStderrLogger({ level, format });
      // KVSENTINEL_REVISION: the build's source revision for kvsentinel_build_info (images set it)
      const daemon = createDaemon(config, {
        logger,
        loadConfig: load,
        revision: process.env.KVSENTINEL_REVISION ?? 'unknown',
      });
      // signals are handled from before the start: a SIGTERM while the sources start stops the daemon once started
      let started: Promise<boolean> = Promise.resolve(false);
      let stopping = false;
      let resolveStopped = (): void => undefined;
      const stopped = new Promise<void>((resolve) => (resolveStopped = resolve));
      const onHup = (): void => {
        daemon.reload().catch(() => undefined); // logged by the daemon; the old config stays
      };
      const onStop = (signal: string): void => {
        if (stopping) {
          // the second signal: stop waiting for in-flight relay requests
          logger.info('stopping now', { signal });
          daemon.hurry();
          return;
        }
        stopping = true;
        logger.info('stopping', { signal });
        process.off('SIGHUP', onHup);
        void started
          .catch(() => false)
          .then(() => daemon.stop())
          .then(resolveStopped);
      };
      process.on('SIGTERM', () => onStop('SIGTERM'));
      process.on('SIGINT', () => onStop('SIGINT'));
      started = daemon.start().then(
        () => true,
        async (err: unknown) => {
          await daemon.stop();
          throw new CliError(`cannot start: ${err instanceof Error ? err.message : String(err)}`);
        },
      );
      if (!(await started)) return;
      process.on('SIGHUP', onHup);
      await stopped;
    });
}
