// `kvsentinel demo`: the bug report end to end on one machine. The live simulator (preset `seed`: events off, router
// block size 32 against the workers' 128; `--fixed`: the healthy configuration) with the sidecar relaying every CTX
// worker (the orchestrator's CTX list points at the relay ports) and watching the router's debug endpoint, the
// sidecar's web server (/metrics, /ws, landing page), the workload driven for --duration, live progress, then the
// same audit report as `kvsentinel audit`. Exit 0 when the demo ran (findings are its point), unless --fail-on.
import { createServer } from 'node:net';
import { Option, type Command } from 'commander';
import { auditExitCode, buildAuditReport, type AuditReport } from '../../core/diagnosis/audit-report.js';
import { SEVERITIES, type Severity } from '../../core/diagnosis/finding-catalog.js';
import { createSentinelState, type SentinelStateSnapshot } from '../../core/state/sentinel-state.js';
import type { SentinelSnapshot } from '../../core/state/snapshot.js';
import { startLiveCluster, type LiveCluster, type LiveWorkerInfo } from '../../sim/live/index.js';
import { SIM_PYTHONHASHSEED } from '../../sim/publisher-format.js';
import { activeFaults, presetConfig, type SimConfig } from '../../sim/sim-config.js';
import { CliError } from '../cli-error.js';
import { colorFor } from '../reporters/color.js';
import { renderJson } from '../reporters/json.js';
import { renderText } from '../reporters/text.js';
import { sampleOf } from '../../core/report/timeline.js';
import { malformedInputs, writeHtmlReport } from '../../app/audit/audit-run.js';
import { loadConfig, parseDuration, type ServeConfig, type ServeFlags } from '../../app/config/serve-config.js';
import { runFor } from '../../app/duration-runner.js';
import { STATE_PRESETS } from '../../app/state-presets.js';
import { createDaemon, type Daemon } from '../../app/daemon/daemon.js';
import { createStderrLogger } from '../serve/logger.js';
import type { Logger } from '../../sources/ports.js';
import { DEFAULT_TIME_SCALE } from './sim-serve.js';

interface DemoOptions {
  fixed?: boolean;
  engine: string;
  set: string[];
  duration: string;
  'web.listenAddress': string;
  timeScale: string;
  json?: boolean;
  failOn?: Severity;
  keepRunning?: boolean;
  progress?: boolean;
  report?: string;
}

/** 75 s of traffic: enough for every finding's minimum samples with room to spare, and the demo ends within ~90 s */
export const DEFAULT_DEMO_DURATION = '75s';
const PROGRESS_EVERY_MS = 5_000;
/**
 * The fixed configuration on top of the `healthy` preset (events on, router tokens_per_block 128): the router's
 * max_batch_size 512 against ~128 active requests per server, as the bug report's fixed deployment (src/sim/README.md;
 * with 64 the load term sends a few percent of turns away from their prefix and load-term-dominates says so)
 */
export const FIXED_SET = ['router.max_batch_size=512'] as const;

const collect = (value: string, previous: string[]): string[] => [...previous, value];

async function freePort(host: string): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(0, host, resolve);
  });
  const address = srv.address();
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no free port');
  return address.port;
}

function pct(value: number | null): string {
  return value === null ? 'n/a' : `${(value * 100).toFixed(1)}%`;
}

export function progressLine(elapsedS: number, s: SentinelSnapshot): string {
  const active = s.findings.filter((f) => f.severity !== 'info').map((f) => f.id);
  return `  ${elapsedS.toFixed(0).padStart(3)} s  requests ${s.requests.toLocaleString('en-US')}  cache hit ${pct(s.cacheHitRatio)}  verdict ${s.verdict}  findings: ${active.length > 0 ? active.join(', ') : 'none'}`;
}

/**
 * Simulator and sidecar share one process and two cores: a drain answered late is the machine, not the worker. A
 * timed-out drain loses the events the worker already handed over (the read is destructive), which would read as
 * event-queue-shared; so the demo waits far longer than a production sidecar would.
 */
function demoTimeouts(c: ServeConfig): ServeConfig {
  return { ...c, timeoutMs: 30_000, relay: { ...c.relay, drainTimeoutMs: 60_000 } };
}

export interface DemoUrls {
  readonly landing: string;
  readonly metrics: string;
  readonly ws: string;
}

export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description(
      "simulate the bug report's cluster (upstream NVIDIA/TensorRT-LLM#14882, docs/design.md §1) with the sidecar relaying every CTX worker, show live progress, then audit it",
    )
    .option('--fixed', 'run the fixed configuration instead (events on, router tokens_per_block 128): ends healthy')
    .option(
      '--engine <engine>',
      'trtllm (the workers serve /kv_cache_events) or vllm (they publish KV events over ZMQ, kvsentinel subscribes, the router reads the streams)',
      'trtllm',
    )
    .option(
      '--set <key=value>',
      'override a simulator setting (repeatable): `kvsentinel sim keys` lists every key, its meaning and preset values',
      collect,
      [],
    )
    .option('--duration <duration>', 'how long to drive traffic before the audit (e.g. 60s, 2m)', DEFAULT_DEMO_DURATION)
    .option(
      '--web.listen-address <host:port>',
      'the sidecar web server: /metrics, /ws, landing page (port 0: a free port)',
      '127.0.0.1:0',
    )
    .option(
      '--time-scale <x>',
      "virtual seconds per real second for the simulator's timings",
      String(DEFAULT_TIME_SCALE),
    )
    .option('--json', 'print the audit as one JSON object (as `audit --json`); progress and URLs go to stderr')
    .addOption(
      new Option(
        '--fail-on <severity>',
        'exit 1 when a finding is at or above this severity (default: exit 0 whenever the demo ran)',
      ).choices(SEVERITIES),
    )
    .option(
      '--keep-running',
      'after the report, keep the simulator and the sidecar running (traffic continues) until Ctrl-C',
    )
    .option('--no-progress', 'no progress lines')
    .option(
      '--report <file.html>',
      'also write the audit as a self-contained HTML report (verdict, findings, plots over the run) to this file',
    )
    .action(async (options: DemoOptions) => {
      if (options.engine !== 'trtllm' && options.engine !== 'vllm')
        throw new CliError(`--engine '${options.engine}': expected trtllm or vllm`);
      // vLLM workers publish over ZMQ (sha256_cbor hashes under PYTHONHASHSEED=0, which kvsentinel is told and
      // verifies); the seed's events-off setting then leaves their streams silent
      const engineSet =
        options.engine === 'vllm' ? ['ctx.kv_events_publisher=vllm', 'ctx.vllm_hashes=sha256_cbor'] : [];
      const config: SimConfig =
        options.fixed === true
          ? presetConfig('healthy', [...FIXED_SET, ...engineSet, ...options.set])
          : presetConfig('seed', [...engineSet, ...options.set]);
      const durationMs = parseDuration('--duration', options.duration);
      const m = /^(.*):(\d{1,5})$/.exec(options['web.listenAddress']);
      if (m === null || Number(m[2]) > 65_535)
        throw new CliError(`--web.listen-address '${options['web.listenAddress']}': expected HOST:PORT`);
      const listen = { host: m[1] === '' ? '127.0.0.1' : m[1]!, port: Number(m[2]) };
      const timeScale = Number(options.timeScale);
      if (!Number.isFinite(timeScale) || timeScale <= 0)
        throw new CliError(`--time-scale ${options.timeScale}: expected a positive number`);

      const json = options.json === true;
      const info = json ? process.stderr : process.stdout;
      const say = (line: string): void => void info.write(`${line}\n`);
      const tty = info.isTTY === true;

      // one state for the web server, the live progress and the final report: counters since the start, findings
      // without hysteresis (what `audit` computes over its window)
      const state = createSentinelState({ ...STATE_PRESETS.demo, mode: 'relay' });
      const snapshot = (): SentinelStateSnapshot => state.snapshot(Date.now());
      let observations = 0;
      const relayHost = '127.0.0.1';
      // warnings while it runs; none from the shutdown (sources see their workers go away)
      const base = createStderrLogger({ level: 'warn' });
      let quiet = false;
      const logger: Logger = {
        info: () => undefined,
        warn: (m, f) => void (quiet || base.warn(m, f)),
        error: (m, f) => void (quiet || base.error(m, f)),
      };
      let daemon: Daemon | null = null;
      let flags: ServeFlags = {};
      let trafficStarted: number | null = null;
      const description = (): string =>
        `kvsentinel demo: simulator preset ${config.preset} behind relays, ${trafficStarted === null ? 'starting' : `${((Date.now() - trafficStarted) / 1000).toFixed(0)} s of traffic`}`;
      const vllmHashFlags = config.ctx.vllmHashes === 'sim' ? '' : `,hash=sha256_cbor,seed=${SIM_PYTHONHASHSEED}`;
      const startSidecar = async (workers: readonly LiveWorkerInfo[]): Promise<Record<string, string>> => {
        const ports = await Promise.all(workers.map(() => freePort(relayHost)));
        flags = {
          relay: workers.map((w, i) => `${w.id}=${w.url}@${relayHost}:${ports[i]!}`),
          // the workers' ZMQ publishers (vLLM engine): one --zmq per worker, rank r at port + r
          zmq: workers.flatMap((w) =>
            w.zmq === null
              ? []
              : [
                  `${w.id}=${w.zmq.endpoint},engine=vllm,ranks=${w.zmq.ranks}${w.zmq.replay !== null ? `,replay=${w.zmq.replay}` : ''}${vllmHashFlags}`,
                ],
          ),
          listenAddress: `${listen.host}:${listen.port}`,
          // --set router.tokenizer / ctx.tokenizer: the sidecar renders text and chat with the router's tokenizer
          ...((config.router.tokenizer ?? config.ctx.tokenizer) != null
            ? { tokenizer: (config.router.tokenizer ?? config.ctx.tokenizer)! }
            : {}),
        };
        const c = demoTimeouts(await loadConfig(flags));
        daemon = createDaemon(c, {
          logger,
          reportDescription: description,
          loadConfig: async () => demoTimeouts(await loadConfig(flags)),
          createState: () => ({
            apply(o) {
              observations++;
              state.apply(o);
            },
            snapshot: (now) => state.snapshot(now),
            diagnosisInput: (now) => state.diagnosisInput(now),
            subscribe: (listener) => state.subscribe(listener),
          }),
        });
        await daemon.start();
        return Object.fromEntries(workers.map((w, i) => [w.id, `${relayHost}:${ports[i]!}`]));
      };

      let cluster: LiveCluster;
      try {
        cluster = await startLiveCluster(config, { timeScale, ctxUrls: startSidecar, ctxWaitMs: 30_000 });
      } catch (err) {
        await (daemon as Daemon | null)?.stop();
        throw new CliError(`cannot start the demo: ${err instanceof Error ? err.message : String(err)}`);
      }
      const sidecar = daemon as unknown as Daemon;
      const stopAll = async (): Promise<void> => {
        quiet = true;
        await cluster.stop(); // the orchestrator first: nothing polls the relays once they stop
        await sidecar.stop();
      };
      try {
        // the router's debug endpoint exists once the orchestrator runs: add it (the relays keep running)
        flags = { ...flags, routerDebug: cluster.debugUrl };
        await sidecar.reload();
      } catch (err) {
        await stopAll();
        throw new CliError(`cannot start the demo: ${err instanceof Error ? err.message : String(err)}`);
      }

      const web = sidecar.webAddress();
      const webHost =
        web.host === '0.0.0.0' || web.host === '::' ? '127.0.0.1' : web.host.includes(':') ? `[${web.host}]` : web.host;
      const urls: DemoUrls = {
        landing: `http://${webHost}:${web.port}/`,
        metrics: `http://${webHost}:${web.port}/metrics`,
        ws: `ws://${webHost}:${web.port}/ws`,
      };
      const faults = activeFaults(config);
      const what =
        options.fixed === true
          ? 'the fixed configuration (events on, router tokens_per_block 128, max_batch_size 512)'
          : `the bug report's configuration (NVIDIA/TensorRT-LLM#14882, docs/design.md §1; preset ${config.preset})`;
      say(
        `kvsentinel demo: simulated ${options.engine === 'vllm' ? 'vLLM (KV events over ZMQ)' : 'TensorRT-LLM'} cluster, ${what}; ${faults.length > 0 ? `faults: ${faults.join(' ')}` : 'no faults'}; time scale ${timeScale}×`,
      );
      say(
        `  sidecar relays ${cluster.workers.map((w) => `${w.id} ${w.address} via ${cluster.ctxAddresses[w.id] ?? '?'}`).join(', ')}; router debug ${cluster.debugUrl}`,
      );
      say(
        `  landing page ${urls.landing}   metrics ${urls.metrics}   live feed ${urls.ws} (kvsentinel tail ${urls.ws})`,
      );
      say(`  driving traffic for ${(durationMs / 1000).toFixed(0)} s …`);

      const workload = cluster.startWorkload();
      const started = Date.now();
      trafficStarted = started;
      let lastWidth = 0;
      const showProgress = (final: boolean): void => {
        if (options.progress === false) return;
        let line: string;
        try {
          line = progressLine((Date.now() - started) / 1000, snapshot());
        } catch {
          return;
        }
        if (tty) {
          info.write(`\r${line.padEnd(lastWidth)}${final ? '\n' : ''}`);
          lastWidth = line.length;
        } else say(line);
      };
      // Ctrl-C ends the traffic early and still reports
      const { interrupted } = await runFor({
        durationMs,
        onProgress: () => showProgress(false),
        progressEveryMs: PROGRESS_EVERY_MS,
      });
      showProgress(true);
      if (!options.keepRunning) await workload.stop();
      const final = snapshot();
      const report: AuditReport = buildAuditReport(final, {
        kind: 'live',
        description: `${description()}${interrupted ? ' (interrupted)' : ''}`,
        observations,
        malformed: malformedInputs(sidecar.status.list()),
      });
      if (options.report !== undefined) {
        const timeline = sidecar.timeline();
        timeline?.add(sampleOf(final));
        try {
          await writeHtmlReport(options.report, {
            report,
            samples: timeline?.samples ?? [],
            sampleIntervalMs: timeline?.intervalMs ?? null,
            input: state.diagnosisInput(final.now),
          });
        } catch (err) {
          await stopAll();
          throw err;
        }
      }
      process.stdout.write(json ? renderJson(report) : renderText(report, colorFor(process.stdout)));
      if (options.report !== undefined) say(`HTML report written to ${options.report}`);
      process.exitCode = options.failOn !== undefined ? auditExitCode(report, options.failOn) : 0;

      if (options.keepRunning === true && !interrupted) {
        say(
          `\nStill running (Ctrl-C to stop): landing page ${urls.landing}, metrics ${urls.metrics}, live feed ${urls.ws} — try \`kvsentinel tail ${urls.ws}\`.`,
        );
        await new Promise<void>((resolve) => {
          process.once('SIGINT', () => resolve());
          process.once('SIGTERM', () => resolve());
        });
        await workload.stop();
      } else {
        say(
          `\nWhile it ran, the sidecar served its landing page at ${urls.landing}, Prometheus metrics at ${urls.metrics} and the live feed at ${urls.ws}`,
        );
        say(
          `(\`kvsentinel tail ${urls.ws}\` prints it). Run \`kvsentinel demo --keep-running\` to keep them up after the report,`,
        );
        say(
          `and \`kvsentinel demo${options.fixed === true ? '' : ' --fixed'}\` for the ${options.fixed === true ? "bug report's" : 'fixed'} configuration.`,
        );
      }
      await stopAll();
    });
}
