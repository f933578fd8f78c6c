// `kvsentinel demo`: the bug report on this machine. Starts the live simulated cluster with the seed preset's faults
// (events off, router tokens_per_block 32, max_batch_size 64), kvsentinel in relay mode in front of every CTX worker
// (plus the orchestrator log), and the agentic workload; shows progress; then prints the audit and where to look.
// `--fixed` runs the healthy configuration for contrast.
import { mkdtempSync, rmSync, appendFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { buildAuditReport } from '../../core/diagnosis/audit-report.js';
import { createSentinelState } from '../../core/state/sentinel-state.js';
import { startLiveCluster } from '../../sim/live/index.js';
import { presetConfig, SimConfigError } from '../../sim/sim-config.js';
import { CliError } from '../cli-error.js';
import { colorFor } from '../reporters/color.js';
import { renderJson } from '../reporters/json.js';
import { renderText } from '../reporters/text.js';
import { createDaemon } from '../serve/daemon.js';
import { createStderrLogger } from '../serve/logger.js';
import { loadCliConfig } from '../serve/source-flags.js';
import { parseDuration, ConfigError } from '../serve/config.js';

interface DemoOptions {
  fixed?: boolean;
  duration: string;
  timeScale: string;
  json?: boolean;
  set?: string[];
}

/** Small enough to finish in ~2 minutes on 2 shared cores, large enough for every finding's minimum sample. */
const DEMO_SCALE = ['workload.concurrency=48', 'workload.trajectories=96', 'workload.turns_min=6', 'workload.turns_max=12'];

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** A free local port: relays get fixed ports so every source names them the same way (the router's host:port). */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description("run the bug report's deployment (simulated, live HTTP) with kvsentinel in relay mode, then audit it")
    .option('--fixed', 'the healthy configuration instead (events on, router tokens_per_block = worker block size)')
    .option('--duration <duration>', 'stop the workload after this long at the latest', '100s')
    .option('--time-scale <x>', 'simulated ms per real ms', '10')
    .option('--set <key=value>', 'simulator override (repeatable), as in `sim run --set`', collect)
    .option('--json', 'print the audit as JSON')
    .action(async (options: DemoOptions) => {
      const err = (line: string): void => void process.stderr.write(`${line}\n`);
      let durationMs: number;
      try {
        durationMs = parseDuration('--duration', options.duration);
      } catch (e) {
        if (e instanceof ConfigError) throw new CliError(e.message);
        throw e;
      }
      const timeScale = Number(options.timeScale);
      if (!Number.isFinite(timeScale) || timeScale <= 0) throw new CliError(`--time-scale '${options.timeScale}': expected a positive number`);
      let config;
      try {
        config = presetConfig(options.fixed === true ? 'healthy' : 'seed', [...DEMO_SCALE, ...(options.set ?? [])]);
      } catch (e) {
        if (e instanceof SimConfigError) throw new CliError(e.message);
        throw e;
      }
      const dir = mkdtempSync(join(tmpdir(), 'kvsentinel-demo-'));
      const orchestratorLog = join(dir, 'orchestrator.log');
      appendFileSync(orchestratorLog, '');
      const state = createSentinelState({ mode: 'relay', windowMs: null });
      let observations = 0;
      let daemon: ReturnType<typeof createDaemon> | null = null;
      const cluster = await startLiveCluster(config, {
        timeScale,
        orchestratorLog: (line) => appendFileSync(orchestratorLog, `${line}\n`),
        ctxUrls: async (workers) => {
          const ports = new Map<string, number>();
          for (const w of workers) ports.set(w.id, await freePort());
          const serve = await loadCliConfig({
            relay: workers.map((w) => `${w.id}=${w.url}@127.0.0.1:${ports.get(w.id)!}`),
            orchestratorLog,
            listenAddress: '127.0.0.1:0',
          });
          daemon = createDaemon(serve, {
            logger: createStderrLogger({ level: 'error' }),
            createState: () => ({
              apply: (o) => {
                observations++;
                state.apply(o);
              },
              snapshot: (now) => state.snapshot(now),
            }),
          });
          await daemon.start();
          const d = daemon;
          return Object.fromEntries(workers.map((w) => {
            const a = d.relayAddress(w.id)!;
            return [w.id, `127.0.0.1:${a.port}`];
          }));
        },
      });
      const started = Date.now();
      const running = daemon as ReturnType<typeof createDaemon> | null;
      if (running === null) throw new CliError('the sidecar did not start');
      const web = running.webAddress();
      const base = `http://127.0.0.1:${web.port}`;
      err(`kvsentinel demo: ${options.fixed === true ? 'healthy configuration' : 'the bug report\'s configuration'} (faults: ${cluster.config.preset === 'seed' ? 'ctx.event_buffer_max_size=0, router.tokens_per_block=32, router.max_batch_size=64' : 'none'})`);
      err(`  cluster: ${cluster.workers.length} CTX workers behind kvsentinel relays, orchestrator ${cluster.orchestratorUrl}`);
      err(`  watch it live: ${base}/ (landing page)  ${base}/metrics  ws://127.0.0.1:${web.port}/ws  (kvsentinel tail ws://127.0.0.1:${web.port}/ws)`);
      let turns = 0;
      const workload = cluster.startWorkload({ onTurn: () => void turns++ });
      const tick = setInterval(() => {
        const s = state.snapshot(Date.now());
        const hit = s.cacheHitRatio === null ? 'n/a' : `${(s.cacheHitRatio * 100).toFixed(1)}%`;
        err(`  ${((Date.now() - started) / 1000).toFixed(0)} s: ${turns} requests, cache hit ${hit}, verdict so far: ${s.verdict}${s.findings.length > 0 ? ` (${s.findings.map((f) => f.id).join(', ')})` : ''}`);
      }, 10_000);
      const limit = new Promise<void>((resolve) => setTimeout(resolve, durationMs).unref());
      await Promise.race([workload.done, limit]);
      clearInterval(tick);
      await workload.stop();
      const report = buildAuditReport(state.snapshot(Date.now()), {
        kind: 'live',
        description: `demo (${options.fixed === true ? 'healthy' : 'seed'}), relay mode, ${((Date.now() - started) / 1000).toFixed(0)} s`,
        observations,
        malformed: 0,
      });
      await running.stop();
      await cluster.stop();
      rmSync(dir, { recursive: true, force: true });
      process.stdout.write(options.json === true ? renderJson(report) : renderText(report, colorFor(process.stdout)));
      if (options.json !== true) {
        process.stdout.write(
          'Where to look in production: `kvsentinel serve --relay ID=URL@PORT …` exposes /metrics (kvsentinel_finding_active, ' +
            'kvsentinel_oracle_cached_tokens_total …), /ws (kvsentinel tail) and the landing page; `kvsentinel audit` gives this report.\n',
        );
      }
    });
}

