// `kvsentinel serve`: the sidecar daemon (design.md §7). Flags and/or a YAML/JSON config file; SIGHUP and
// POST /-/reload re-read the file (an invalid one is rejected and the old one kept); SIGTERM/SIGINT stop gracefully.
import type { Command } from 'commander';
import { CliError } from '../cli-error.js';
import { ConfigError, loadConfig, type ServeFlags } from '../serve/config.js';
import { createDaemon } from '../serve/daemon.js';
import { createStderrLogger } from '../serve/logger.js';

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

interface ServeOptions {
  config?: string;
  'config.file'?: string;
  'config.check'?: boolean;
  relay?: string[];
  ctx?: string[];
  events?: string;
  routerDebug?: string;
  requests?: string[];
  orchestratorLog?: string;
  'web.listenAddress'?: string;
  'log.level'?: string;
}

export function registerServeCommand(program: Command): void {
  program
    .command('serve')
    .description('run the sidecar: relay ports, watch sources, /metrics, /ws live feed, landing page at /')
    .option('--config.file <file>', 'YAML or JSON configuration file')
    .option('--config <file>', 'alias of --config.file')
    .option('--config.check', 'validate the configuration and exit (0 valid, 2 invalid)')
    .option('--relay <ID=URL@[HOST:]PORT>', 'relay CTX worker ID on its own port (repeatable); the router then uses <sidecar-host>:PORT', collect)
    .option('--ctx <ID=URL>', 'watch a CTX worker (/server_info; with --events exclusive also drain its events) (repeatable)', collect)
    .option('--events <mode>', 'none | exclusive: drain --ctx workers\' /kv_cache_events (only when no router consumes them)')
    .option('--router-debug <url>', 'router debug endpoint (design.md §8)')
    .option('--requests <[FORMAT:]FILE>', 'request log JSONL to follow; FORMAT canonical|perf-metrics|openai|relay (repeatable)', collect)
    .option('--orchestrator-log <file>', 'orchestrator log to follow')
    .option('--web.listen-address <host:port>', 'metrics, health, live feed and landing page (default 0.0.0.0:9464: Prometheus scrapes the pod IP)')
    .option('--log.level <level>', 'info | warn | error', 'info')
    .action(async (options: ServeOptions) => {
      if (options.config !== undefined && options['config.file'] !== undefined) throw new CliError('give --config or --config.file, not both');
      if (options.events !== undefined && options.events !== 'none' && options.events !== 'exclusive') throw new CliError(`--events '${options.events}': expected none or exclusive`);
      const level = options['log.level'];
      if (level !== 'info' && level !== 'warn' && level !== 'error') throw new CliError(`--log.level '${String(level)}': expected info, warn or error`);
      const flags: ServeFlags = {
        ...(options['config.file'] ?? options.config) !== undefined ? { configFile: (options['config.file'] ?? options.config) as string } : {},
        ...(options.relay !== undefined ? { relay: options.relay } : {}),
        ...(options.ctx !== undefined ? { ctx: options.ctx } : {}),
        ...(options.events !== undefined ? { events: options.events } : {}),
        ...(options.routerDebug !== undefined ? { routerDebug: options.routerDebug } : {}),
        ...(options.requests !== undefined ? { requests: options.requests } : {}),
        ...(options.orchestratorLog !== undefined ? { orchestratorLog: options.orchestratorLog } : {}),
        ...(options['web.listenAddress'] !== undefined ? { listenAddress: options['web.listenAddress'] } : {}),
      };
      const load = async (): Promise<Awaited<ReturnType<typeof loadConfig>>> => {
        try {
          return await loadConfig(flags);
        } catch (err) {
          if (err instanceof ConfigError) throw new CliError(err.message);
          throw err;
        }
      };
      const config = await load();
      if (options['config.check'] === true) {
        process.stdout.write('configuration is valid\n');
        return;
      }
      if (config.relays.length === 0 && config.ctx.length === 0 && config.routerDebug === null && config.orchestratorLog === null && config.requestLogs.length === 0) {
        throw new CliError('no source configured: give --relay, --ctx, --router-debug, --requests or --orchestrator-log (or a --config.file)');
      }
      const logger = createStderrLogger({ level });
      const daemon = createDaemon(config, { logger, loadConfig: load });
      try {
        await daemon.start();
      } catch (err) {
        await daemon.stop();
        throw new CliError(`cannot start: ${err instanceof Error ? err.message : String(err)}`);
      }
      await new Promise<void>((resolve) => {
        const onHup = (): void => {
          daemon.reload().catch(() => undefined); // logged by the daemon; the old config stays
        };
        const onStop = (signal: string): void => {
          logger.info('stopping', { signal });
          process.off('SIGHUP', onHup);
          void daemon.stop().then(resolve);
        };
        process.on('SIGHUP', onHup);
        process.once('SIGTERM', () => onStop('SIGTERM'));
        process.once('SIGINT', () => onStop('SIGINT'));
      });
    });
}
