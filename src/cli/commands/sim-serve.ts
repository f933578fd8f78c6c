// `kvsentinel sim serve`: the simulated TensorRT-LLM disaggregated cluster on real ports — every CTX worker, the
// orchestrator and its debug endpoint — optionally driving the closed-loop workload in (scaled) real time, until
// SIGINT/SIGTERM or --duration. Prints the URLs (with --json: one JSON line first, then one when the workload ends).
import { errorMessage, isKvsentinelError, KvsentinelError } from '../../core/errors.js';
import { createWriteStream, type WriteStream } from 'node:fs';
import { Option, type Command } from 'commander';
import { startLiveCluster, type LiveCluster } from '../../sim/live/index.js';
import { activeFaults, presetConfig, type SimConfig } from '../../sim/sim-config.js';
import { readDuration } from '../../core/units.js';
import { CliError } from '../cli-error.js';
import { collect } from '../collect-option.js';
import { DEFAULT_TIME_SCALE, parseTimeScale } from './time-scale-flag.js';

interface SimServeOptions {
  preset: string;
  set: string[];
  host: string;
  portBase?: number;
  workload?: boolean;
  timeScale: number;
  ctxUrls: string[];
  ctxWait: number;
  requestLog?: string;
  requestLogTokenIds?: boolean;
  orchestratorLog?: string;
  duration?: number;
  exitWhenDone?: boolean;
  json?: boolean;
}

const DEFAULT_CTX_WAIT_MS = 120_000;
/** while waiting for CTX addresses (e.g. relay ports of a sidecar still starting), say so this often */
const WAIT_PROGRESS_MS = 5_000;

function parsePort(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 65_535)
    throw new CliError(`--port-base ${value}: expected a port number 1..65535`);
  return Number(value);
}

function parseDuration(flag: string): (value: string) => number {
  return (value) => {
    const read = readDuration(value);
    if ('ms' in read) return read.ms;
    throw new CliError(
      `${flag} ${value}: ${read.error === 'no-unit' ? `no unit: write ${value}s or ${value}ms` : 'expected a duration such as 30s, 1500ms, 2m'}`,
    );
  };
}

/** `ID=HOST:PORT,ID=HOST:PORT` (repeatable) → id → host:port */
export function parseCtxUrls(items: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of items) {
    for (const part of item.split(',')) {
      const entry = part.trim();
      if (entry === '') continue;
      const eq = entry.indexOf('=');
      const id = eq > 0 ? entry.slice(0, eq).trim() : '';
      const address =
        eq > 0
          ? entry
              .slice(eq + 1)
              .trim()
              .replace(/^https?:\/\//i, '')
              .replace(/\/+$/, '')
          : '';
      if (id === '' || !/^[^\s/]+:\d{1,5}$/.test(address))
        throw new CliError(`--ctx-urls ${entry}: expected ID=HOST:PORT (e.g. ctx0=127.0.0.1:9401)`);
      if (out[id] !== undefined) throw new CliError(`--ctx-urls ${entry}: ${id} given twice`);
      out[id] = address;
    }
  }
  return out;
}

function lineWriter(
  path: string | undefined,
  flag: string,
): { write: ((line: string) => void) | undefined; close: () => Promise<void> } {
  if (path === undefined) return { write: undefined, close: () => Promise.resolve() };
  let stream: WriteStream;
  try {
    stream = createWriteStream(path, { flags: 'a' });
  } catch (err) {
    throw new CliError(`${flag} ${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
  let failed: Error | null = null;
  stream.on('error', (err) => {
    if (failed === null) process.stderr.write(`kvsentinel: ${flag} ${path}: ${err.message}\n`);
    failed = err;
  });
  return {
    write: (line) => {
      if (failed === null) stream.write(`${line}\n`);
    },
    close: () => new Promise((resolve) => stream.end(() => resolve())),
  };
}

function describeCluster(cluster: LiveCluster, config: SimConfig, scale: number): Record<string, unknown> {
  return {
    preset: config.preset,
    time_scale: scale,
    faults: activeFaults(config),
    workers: cluster.workers.map((w) => ({ id: w.id, url: w.url, address: w.address })),
    orchestrator_url: cluster.orchestratorUrl,
    debug_url: cluster.debugUrl,
    applied_events_url: cluster.appliedEventsUrl,
    ctx_addresses: cluster.ctxAddresses,
  };
}

type LineWriter = ReturnType<typeof lineWriter>;

/** Starts the cluster, saying while it waits for CTX addresses given by --ctx-urls (a sidecar's relays, say). */
async function startWaiting(
  config: SimConfig,
  options: SimServeOptions,
  ctxUrls: Readonly<Record<string, string>>,
  requestLog: LineWriter,
  orchestratorLog: LineWriter,
): Promise<LiveCluster> {
  const err = (line: string): void => void process.stderr.write(`${line}\n`);
  const waitingFor = Object.values(ctxUrls).join(', ');
  if (waitingFor !== '')
    err(
      `waiting for the CTX addresses ${waitingFor} to answer /server_info (up to ${(options.ctxWait / 1000).toFixed(0)} s) …`,
    );
  const waitStarted = Date.now();
  const waitTimer =
    waitingFor !== ''
      ? setInterval(
          () =>
            err(
              `  still waiting for ${waitingFor}: ${((Date.now() - waitStarted) / 1000).toFixed(0)} s of ${(options.ctxWait / 1000).toFixed(0)} s`,
            ),
          WAIT_PROGRESS_MS,
        )
      : null;
  try {
    return await startLiveCluster(config, {
      host: options.host,
      timeScale: options.timeScale,
      ctxUrls,
      ctxWaitMs: options.ctxWait,
      ...(options.portBase !== undefined ? { portBase: options.portBase } : {}),
      ...(requestLog.write !== undefined ? { requestLog: requestLog.write } : {}),
      ...(orchestratorLog.write !== undefined ? { orchestratorLog: orchestratorLog.write } : {}),
      ...(options.requestLogTokenIds === true ? { requestLogPromptTokenIds: true } : {}),
    });
  } catch (e) {
    await Promise.all([requestLog.close(), orchestratorLog.close()]);
    // a known failure keeps its code (an unknown --ctx-urls worker 2, a CTX address that never answered 5)
    throw isKvsentinelError(e) ? e : new KvsentinelError('start-failed', errorMessage(e), { cause: e });
  } finally {
    if (waitTimer !== null) clearInterval(waitTimer);
  }
}

function printCluster(cluster: LiveCluster, config: SimConfig, options: SimServeOptions): void {
  const out = (line: string): void => void process.stdout.write(`${line}\n`);
  if (options.json) {
    out(JSON.stringify(describeCluster(cluster, config, options.timeScale)));
    return;
  }
  out(
    `kvsentinel sim serve: preset ${config.preset}, time scale ${options.timeScale}×, faults: ${activeFaults(config).join(' ') || 'none'}`,
  );
  for (const w of cluster.workers)
    out(
      `  ${w.id.padEnd(13)} ${w.url}${cluster.ctxAddresses[w.id] !== w.address ? `   (orchestrator sends to ${cluster.ctxAddresses[w.id]})` : ''}`,
    );
  out(`  orchestrator  ${cluster.orchestratorUrl}`);
  out(`  router debug  ${cluster.debugUrl}`);
}

/** --workload: drives it, progress on stderr every 5 s, its summary when it ends (then `finish` with --exit-when-done). */
function driveWorkload(cluster: LiveCluster, config: SimConfig, options: SimServeOptions, finish: () => void): void {
  const out = (line: string): void => void process.stdout.write(`${line}\n`);
  const err = (line: string): void => void process.stderr.write(`${line}\n`);
  const workload = cluster.startWorkload();
  const progress = (): void => {
    const s = workload.summary();
    err(
      `  ${s.wallSeconds.toFixed(0)} s: ${s.requests} requests (${s.failedRequests} failed), ${s.trajectories}/${config.workload.trajectories} trajectories, cache hit ${(s.cacheHitRatio * 100).toFixed(1)}%, turn scatter ${(s.turnScatterRatio * 100).toFixed(1)}%`,
    );
  };
  // progress on stderr in both modes (--json keeps stdout for the two JSON lines)
  const timer = setInterval(progress, 5000);
  timer?.unref();
  void workload.done.then(() => clearInterval(timer));
  void workload.done.then((s) => {
    if (s.stopped) return;
    const summary = {
      requests: s.requests,
      trajectories: s.trajectories,
      cache_hit_ratio: s.cacheHitRatio,
      turn_scatter_ratio: s.turnScatterRatio,
      failed_requests: s.failedRequests,
      wall_seconds: s.wallSeconds,
    };
    if (options.json) out(JSON.stringify({ workload_done: summary }));
    else err(`workload done: ${JSON.stringify(summary)}`);
    if (options.exitWhenDone) finish();
  });
}

/** Serves until SIGINT / SIGTERM, --duration, or (--exit-when-done) the workload's end. */
function serveUntilDone(cluster: LiveCluster, config: SimConfig, options: SimServeOptions): Promise<void> {
  return new Promise<void>((resolve) => {
    let finished = false;
    const finish = (): void => {
      if (finished) return;
      finished = true;
      process.off('SIGINT', finish);
      process.off('SIGTERM', finish);
      resolve();
    };
    process.once('SIGINT', finish);
    process.once('SIGTERM', finish);
    if (options.duration !== undefined) setTimeout(finish, options.duration).unref();
    if (options.workload) driveWorkload(cluster, config, options, finish);
    else cluster.armFaults();
  });
}

async function runSimServe(options: SimServeOptions): Promise<void> {
  const config: SimConfig = presetConfig(options.preset, options.set);
  const ctxUrls = parseCtxUrls(options.ctxUrls);
  const requestLog = lineWriter(options.requestLog, '--request-log');
  const orchestratorLog = lineWriter(options.orchestratorLog, '--orchestrator-log');
  const cluster = await startWaiting(config, options, ctxUrls, requestLog, orchestratorLog);
  printCluster(cluster, config, options);
  await serveUntilDone(cluster, config, options);
  await cluster.stop();
  await Promise.all([requestLog.close(), orchestratorLog.close()]);
}

export function registerSimServeCommand(program: Command): void {
  const sim =
    program.commands.find((c) => c.name() === 'sim') ??
    program.command('sim').description('the simulated TensorRT-LLM disaggregated cluster');
  sim
    .command('serve')
    .description(
      'serve the simulated cluster on real ports: CTX workers, the orchestrator and its /debug/router endpoint',
    )
    .option('--preset <name>', 'preset (seed, healthy)', 'seed')
    .option(
      '--set <key=value>',
      'override a simulator setting (repeatable; `kvsentinel sim keys` lists every key)',
      collect,
      [],
    )
    .option('--host <host>', 'listen host of every server', '127.0.0.1')
    .option('--port-base <n>', 'workers on N, N+1 …, the orchestrator after them (default: free ports)', parsePort)
    .option('--workload', 'drive the closed-loop multi-turn workload through the orchestrator')
    .option('--time-scale <x>', 'virtual seconds per real second for model timings', parseTimeScale, DEFAULT_TIME_SCALE)
    .option(
      '--ctx-urls <list>',
      "the orchestrator's CTX list: ID=HOST:PORT,… (e.g. relay ports); others stay the workers",
      collect,
      [],
    )
    .addOption(
      new Option('--ctx-wait <duration>', 'how long to wait for every CTX address to answer /server_info')
        .argParser(parseDuration('--ctx-wait'))
        .default(DEFAULT_CTX_WAIT_MS, '2m'),
    )
    .option('--request-log <file>', 'append the canonical request log (JSONL) to FILE')
    .option('--request-log-token-ids', 'include prompt_token_ids in the request log')
    .option('--orchestrator-log <file>', "append the orchestrator's TensorRT-LLM log lines to FILE")
    .option('--duration <duration>', 'stop after this long (real time)', parseDuration('--duration'))
    .option('--exit-when-done', 'with --workload: stop when the workload finished')
    .option('--json', 'print the URLs as one JSON line (and the workload summary as another)')
    .action(runSimServe);
}
