// `kvsentinel demo`: the bug report end to end on one machine. The live simulator (preset `seed`: events off, router
// block size 32 against the workers' 128; `--fixed`: the healthy configuration) with the sidecar relaying every CTX
// worker (the orchestrator's CTX list points at the relay ports) and watching the router's debug endpoint, the
// sidecar's web server (/metrics, /ws, landing page), the workload driven for --duration, live progress, then the
// same audit report as `kvsentinel audit`. Exit 0 when the demo ran (findings are its point), unless --fail-on.
import { Option, type Command } from 'commander';
import { auditExitCode, type AuditReport } from '../../core/report/audit-report.js';
import { SEVERITIES, type Severity } from '../../core/diagnosis/finding-catalog.js';
import { counterMark, steadyStateStats } from '../../core/report/steady-window.js';
import type { SentinelSnapshot } from '../../core/state/snapshot.js';
import type { LiveWorkload } from '../../sim/live/index.js';
import { activeFaults, type SimConfig } from '../../sim/sim-config.js';
import { CliError } from '../cli-error.js';
import { colorFor } from '../reporters/color.js';
import { renderJson } from '../reporters/json.js';
import { renderText } from '../reporters/text.js';
import { parseDuration, parseHostPort } from '../../app/config/serve-config.js';
import {
  DEFAULT_DEMO_DURATION,
  DEFAULT_WARMUP_REQUESTS,
  demoSimConfig,
  startDemo,
  type DemoEngine,
  type DemoRun,
  type WarmupStatus,
} from '../../app/demo/demo-run.js';
import { runFor } from '../../app/duration-runner.js';
import { createStderrLogger } from '../serve/logger.js';
import { collect } from '../collect-option.js';
import { DEFAULT_TIME_SCALE, parseTimeScale } from './time-scale-flag.js';

interface DemoOptions {
  fixed?: boolean;
  engine: string;
  set: string[];
  duration: string;
  warmup: string;
  measure?: string;
  'web.listenAddress': string;
  timeScale: string;
  json?: boolean;
  failOn?: Severity;
  keepRunning?: boolean;
  progress?: boolean;
  report?: string;
}

const PROGRESS_EVERY_MS = 5_000;
/** how often --measure checks the steady-state window's request count */
const MEASURE_CHECK_MS = 500;

function pct(value: number | null): string {
  return value === null ? 'n/a' : `${(value * 100).toFixed(1)}%`;
}

const int = (n: number): string => n.toLocaleString('en-US');

/** While the warm-up lasts, how far it is; after it, the hit ratio of the steady-state window so far. */
function warmupPart(s: SentinelSnapshot, w: WarmupStatus | null): string {
  if (w === null || w.targetRequests === 0 || w.startedAt === null) return '';
  if (w.warmedUp === null) return `  warm-up ${int(Math.min(s.requests, w.targetRequests))}/${int(w.targetRequests)}`;
  const st = steadyStateStats({ targetRequests: w.targetRequests, startedAt: w.startedAt }, w.warmedUp, counterMark(s));
  return `  steady-state hit ${pct(st.cache_hit_ratio)}`;
}

export function progressLine(elapsedS: number, s: SentinelSnapshot, warmup: WarmupStatus | null = null): string {
  const active = s.findings.filter((f) => f.severity !== 'info').map((f) => f.id);
  return `  ${elapsedS.toFixed(0).padStart(3)} s  requests ${int(s.requests)}  cache hit ${pct(s.cacheHitRatio)}${warmupPart(s, warmup)}  verdict ${s.verdict}  findings: ${active.length > 0 ? active.join(', ') : 'none'}`;
}

/** The demo's flags, read and checked before anything starts. */
interface DemoPlan {
  readonly fixed: boolean;
  readonly engine: DemoEngine;
  readonly config: SimConfig;
  readonly durationMs: number;
  readonly listen: { readonly host: string; readonly port: number };
  readonly warmupRequests: number;
  readonly measureRequests: number | null;
  readonly timeScale: number;
}

function demoPlan(options: DemoOptions): DemoPlan {
  if (options.engine !== 'trtllm' && options.engine !== 'vllm')
    throw new CliError(`--engine '${options.engine}': expected trtllm or vllm`);
  const engine = options.engine === 'vllm' ? 'vllm' : 'trtllm';
  const config = demoSimConfig(options.fixed === true, engine, options.set);
  const durationMs = parseDuration('--duration', options.duration);
  // serve's grammar ([IPV6]:PORT included); the demo's empty host is loopback, not every interface
  const listen = parseHostPort('--web.listen-address', options['web.listenAddress'], '127.0.0.1');
  const warmupRequests = Number(options.warmup);
  if (!/^\d+$/.test(options.warmup) || !Number.isSafeInteger(warmupRequests))
    throw new CliError(`--warmup '${options.warmup}': expected a number of requests (0: no warm-up)`);
  const measureRequests = options.measure === undefined ? null : Number(options.measure);
  if (options.measure !== undefined && (!/^\d+$/.test(options.measure) || !(measureRequests! > 0)))
    throw new CliError(`--measure '${options.measure}': expected a positive number of requests`);
  if (measureRequests !== null && warmupRequests === 0)
    throw new CliError('--measure needs a warm-up (--warmup > 0): it counts the steady-state window');
  const timeScale = parseTimeScale(options.timeScale);
  return {
    fixed: options.fixed === true,
    engine,
    config,
    durationMs,
    listen,
    warmupRequests,
    measureRequests,
    timeScale,
  };
}

/** Where the demo's own lines go: stdout, or stderr with --json (stdout is the report's) */
interface DemoOutput {
  readonly info: NodeJS.WriteStream;
  readonly tty: boolean;
  say(line: string): void;
}

function announce(out: DemoOutput, plan: DemoPlan, run: DemoRun): void {
  const { cluster, urls } = run;
  const { config, engine } = plan;
  const faults = activeFaults(config);
  const what = plan.fixed
    ? 'the fixed configuration (events on, router tokens_per_block 128, max_batch_size 512)'
    : `the bug report's configuration (NVIDIA/TensorRT-LLM#14882, docs/design.md §1; preset ${config.preset})`;
  out.say(
    `kvsentinel demo: simulated ${engine === 'vllm' ? 'vLLM (KV events over ZMQ)' : 'TensorRT-LLM'} cluster, ${what}; ${faults.length > 0 ? `faults: ${faults.join(' ')}` : 'no faults'}; time scale ${plan.timeScale}×`,
  );
  out.say(
    `  sidecar relays ${cluster.workers.map((w) => `${w.id} ${w.address} via ${cluster.ctxAddresses[w.id] ?? '?'}`).join(', ')}; router debug ${cluster.debugUrl}`,
  );
  out.say(
    `  landing page ${urls.landing}   metrics ${urls.metrics}   live feed ${urls.ws} (kvsentinel tail ${urls.ws})`,
  );
  out.say(
    `  driving traffic for ${(plan.durationMs / 1000).toFixed(0)} s${plan.warmupRequests > 0 ? `; the first ${int(plan.warmupRequests)} requests warm the cold cluster up, the steady-state window follows` : ''} …`,
  );
}

/** Drives the traffic for --duration (or until --measure or Ctrl-C) with progress lines; returns the workload. */
async function driveTraffic(
  out: DemoOutput,
  plan: DemoPlan,
  run: DemoRun,
  progress: boolean,
): Promise<{ workload: LiveWorkload; interrupted: boolean }> {
  const started = Date.now();
  let lastWidth = 0;
  const workload = run.startTraffic({
    warmupRequests: plan.warmupRequests,
    onWarmedUp: (mark) => {
      if (!progress) return;
      const line = `  warm-up done: ${int(mark.requests)} requests in ${((mark.at - started) / 1000).toFixed(0)} s (cache hit since the cold start ${pct(mark.promptTokens > 0 ? mark.cachedTokens / mark.promptTokens : null)}); the steady-state window starts`;
      if (out.tty) {
        out.info.write(`\r${line.padEnd(lastWidth)}\n`);
        lastWidth = 0;
      } else out.say(line);
    },
  });
  const showProgress = (final: boolean): void => {
    if (!progress) return;
    let line: string;
    try {
      line = progressLine((Date.now() - started) / 1000, run.snapshot(), run.warmup());
    } catch {
      return;
    }
    if (out.tty) {
      out.info.write(`\r${line.padEnd(lastWidth)}${final ? '\n' : ''}`);
      lastWidth = line.length;
    } else out.say(line);
  };
  const measureRequests = plan.measureRequests;
  // Ctrl-C ends the traffic early and still reports
  const { interrupted } = await runFor({
    durationMs: plan.durationMs,
    onProgress: () => showProgress(false),
    progressEveryMs: PROGRESS_EVERY_MS,
    ...(measureRequests !== null
      ? {
          completion: (complete: () => void) => {
            const check = setInterval(() => {
              const mark = run.warmup().warmedUp;
              if (mark !== null && run.snapshot().requests - mark.requests >= measureRequests) complete();
            }, MEASURE_CHECK_MS);
            return () => clearInterval(check);
          },
        }
      : {}),
  });
  showProgress(true);
  return { workload, interrupted };
}

/** After the report: keep serving until Ctrl-C (--keep-running), or say where things were and what to try next. */
async function afterReport(
  out: DemoOutput,
  options: DemoOptions,
  run: DemoRun,
  workload: LiveWorkload,
  interrupted: boolean,
): Promise<void> {
  const { urls } = run;
  if (options.keepRunning === true && !interrupted) {
    out.say(
      `\nStill running (Ctrl-C to stop): landing page ${urls.landing}, metrics ${urls.metrics}, live feed ${urls.ws} — try \`kvsentinel tail ${urls.ws}\`.`,
    );
    await new Promise<void>((resolve) => {
      process.once('SIGINT', () => resolve());
      process.once('SIGTERM', () => resolve());
    });
    await workload.stop();
    return;
  }
  out.say(
    `\nWhile it ran, the sidecar served its landing page at ${urls.landing}, Prometheus metrics at ${urls.metrics} and the live feed at ${urls.ws}`,
  );
  out.say(
    `(\`kvsentinel tail ${urls.ws}\` prints it). Run \`kvsentinel demo --keep-running\` to keep them up after the report,`,
  );
  out.say(
    `and \`kvsentinel demo${options.fixed === true ? '' : ' --fixed'}\` for the ${options.fixed === true ? "bug report's" : 'fixed'} configuration.`,
  );
}

async function runDemo(options: DemoOptions): Promise<void> {
  const plan = demoPlan(options);
  const json = options.json === true;
  const info = json ? process.stderr : process.stdout;
  const out: DemoOutput = { info, tty: info.isTTY === true, say: (line) => void info.write(`${line}\n`) };

  const run = await startDemo({
    config: plan.config,
    timeScale: plan.timeScale,
    listen: plan.listen,
    logger: createStderrLogger({ level: 'warn' }),
  });
  announce(out, plan, run);
  const { workload, interrupted } = await driveTraffic(out, plan, run, options.progress !== false);
  if (!options.keepRunning) await workload.stop();
  let report: AuditReport;
  try {
    report = await run.report({
      interrupted,
      ...(options.report !== undefined ? { reportFile: options.report } : {}),
    });
  } catch (err) {
    await run.stop();
    throw err;
  }
  process.stdout.write(json ? renderJson(report) : renderText(report, colorFor(process.stdout)));
  if (options.report !== undefined) out.say(`HTML report written to ${options.report}`);
  const warm = run.warmup();
  if (warm.targetRequests > 0 && warm.warmedUp === null)
    out.say(
      `\nThe warm-up (${int(warm.targetRequests)} requests) had not ended when the traffic stopped: the hit ratio above is a cold start's. A longer --duration measures the steady state.`,
    );
  process.exitCode = options.failOn !== undefined ? auditExitCode(report, options.failOn) : 0;
  await afterReport(out, options, run, workload, interrupted);
  await run.stop();
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
    .option(
      '--duration <duration>',
      'how long to drive traffic before the audit, warm-up included (e.g. 60s, 2m)',
      DEFAULT_DEMO_DURATION,
    )
    .option(
      '--warmup <requests>',
      "requests the cluster serves from its cold start before the steady-state window opens (the report's steady-state hit ratio counts what follows; 0: no window)",
      String(DEFAULT_WARMUP_REQUESTS),
    )
    .option(
      '--measure <requests>',
      'end the traffic once the steady-state window holds this many requests (--duration still caps the run)',
    )
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
    .action(runDemo);
}
