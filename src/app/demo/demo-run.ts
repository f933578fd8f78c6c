// The demo use case: the live simulator (the bug report's configuration, or the fixed one) with the sidecar relaying
// every CTX worker (the orchestrator's CTX list points at the relay ports) and watching the router's debug endpoint,
// one state for the web server, the progress and the report. The CLI (`kvsentinel demo`) parses flags, prints
// progress and the report this returns.
import { createServer } from 'node:net';
import { buildAuditReport, type AuditReport } from '../../core/report/audit-report.js';
import { errorMessage, KvsentinelError } from '../../core/errors.js';
import { counterMark, steadyStateStats, type CounterMark } from '../../core/report/steady-window.js';
import { sampleOf } from '../../core/report/timeline.js';
import {
  createSentinelState,
  type SentinelState,
  type SentinelStateSnapshot,
} from '../../core/state/sentinel-state.js';
import type { Observation } from '../../core/observe/observation.js';
import { startLiveCluster, type LiveCluster, type LiveWorkerInfo, type LiveWorkload } from '../../sim/live/index.js';
import { SIM_PYTHONHASHSEED } from '../../sim/publisher-format.js';
import { presetConfig, type SimConfig } from '../../sim/sim-config.js';
import type { Logger } from '../../sources/ports.js';
import { malformedInputs, writeHtmlReport } from '../audit/audit-run.js';
import { loadConfig, type ServeConfig, type ServeFlags } from '../config/serve-config.js';
import { createDaemon, type Daemon } from '../daemon/daemon.js';
import { STATE_PRESETS } from '../state-presets.js';
import { tappedStatePort } from '../tapped-state.js';

/**
 * 90 s of traffic, warm-up included: on 2 shared cores the warm-up takes 30–60 s and leaves a steady-state window
 * of 1 000–3 000 requests; every finding's minimum samples are reached within the first 10 s
 */
export const DEFAULT_DEMO_DURATION = '90s';
/**
 * The demo's workload, calibrated so a cold cluster reaches the report's steady state within the demo
 * (src/sim/README.md, *The demo's workload*): c = 48 trajectories in flight instead of the report's 384, so the
 * steady state comes after ~1 000 requests instead of ~12 000 (more than the live cluster drives in minutes); every
 * length halved (system prefix, task, outputs, tool results; decode time per token doubled, so a turn lasts as
 * long), which halves the CPU the live cluster spends per request and leaves the hit ratios, ratios of lengths, as
 * they were; and 25–66 turns per trajectory instead of 22–62: the live cluster's seed sits about a point above the
 * virtual driver's, and at 30–74 it settled at 91 % (eight runs, 89.8–92.2); these put it at the report's ~90 %
 * (89.8–90.8 %; --fixed 96.2 %).
 */
export const DEMO_SET = [
  'workload.concurrency=48',
  'workload.turns_min=25',
  'workload.turns_max=66',
  'workload.system_prefix_tokens=1250',
  'workload.task_tokens_median=200',
  'workload.output_tokens_median=130',
  'workload.tool_tokens_median=150',
  'workload.tool_big_median=4000',
  'workload.tool_tokens_max=16000',
  'gen.ms_per_token=50',
] as const;
/** requests before the steady-state window opens (at c = 48 the hit ratio has levelled off by then) */
export const DEFAULT_WARMUP_REQUESTS = 1200;
/**
 * The fixed configuration on top of the `healthy` preset (events on, router tokens_per_block 128): the router's
 * max_batch_size 512 against ~128 active requests per server, as the bug report's fixed deployment (src/sim/README.md;
 * with 64 the load term sends a few percent of turns away from their prefix and load-term-dominates says so)
 */
export const FIXED_SET = ['router.max_batch_size=512'] as const;

export type DemoEngine = 'trtllm' | 'vllm';

/** The simulator configuration of a demo run: the seed (or, fixed, the healthy preset) plus the engine and --set. */
export function demoSimConfig(fixed: boolean, engine: DemoEngine, set: readonly string[]): SimConfig {
  // vLLM workers publish over ZMQ (sha256_cbor hashes under PYTHONHASHSEED=0, which kvsentinel is told and
  // verifies); the seed's events-off setting then leaves their streams silent
  const engineSet = engine === 'vllm' ? ['ctx.kv_events_publisher=vllm', 'ctx.vllm_hashes=sha256_cbor'] : [];
  return fixed
    ? presetConfig('healthy', [...DEMO_SET, ...FIXED_SET, ...engineSet, ...set])
    : presetConfig('seed', [...DEMO_SET, ...engineSet, ...set]);
}

export interface DemoUrls {
  readonly landing: string;
  readonly metrics: string;
  readonly ws: string;
}

export interface DemoOptions {
  readonly config: SimConfig;
  readonly timeScale: number;
  /** the sidecar's web server (port 0: a free port) */
  readonly listen: { readonly host: string; readonly port: number };
  /** warnings while it runs; the run silences it for its own shutdown (sources see their workers go away) */
  readonly logger: Logger;
  /** every observation the sidecar's state applies, in order (what a recording of the run would hold) */
  readonly onObservation?: (observation: Observation) => void;
}

/** Where the warm-up stands: the steady-state window opens once the sidecar has counted `targetRequests`. */
export interface WarmupStatus {
  readonly targetRequests: number;
  /** when the traffic started, ms; null before */
  readonly startedAt: number | null;
  /** the counters when the warm-up ended; null while it lasts (or with a target of 0: no window) */
  readonly warmedUp: CounterMark | null;
}

export interface DemoRun {
  readonly cluster: LiveCluster;
  readonly urls: DemoUrls;
  snapshot(): SentinelStateSnapshot;
  /**
   * Drives the workload; the report's description counts from here. The first `warmupRequests` requests the
   * sidecar counts are the warm-up (0: none); `onWarmedUp` is called once when it ends.
   */
  startTraffic(options?: {
    readonly warmupRequests?: number;
    readonly onWarmedUp?: (w: CounterMark) => void;
  }): LiveWorkload;
  warmup(): WarmupStatus;
  /** the audit of what the state saw so far (and the HTML report when `reportFile` is given) */
  report(options: { readonly interrupted: boolean; readonly reportFile?: string }): Promise<AuditReport>;
  /** the orchestrator first (nothing polls the relays once they stop), then the sidecar */
  stop(): Promise<void>;
}

/**
 * Simulator and sidecar share one process and two cores: a drain answered late is the machine, not the worker. A
 * timed-out drain loses the events the worker already handed over (the read is destructive), which would read as
 * event-queue-shared; so the demo waits far longer than a production sidecar would.
 */
function demoTimeouts(c: ServeConfig): ServeConfig {
  return { ...c, timeoutMs: 30_000, relay: { ...c.relay, drainTimeoutMs: 60_000 } };
}

async function freePort(host: string): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(0, host, resolve);
  });
  const address = srv.address();
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new KvsentinelError('start-failed', 'no free port');
  return address.port;
}

const RELAY_HOST = '127.0.0.1';
/** how often the warm-up's end is checked against the sidecar's request count */
const WARMUP_CHECK_MS = 500;

/** The sidecar's flags for the started workers: a relay per worker on `ports`, their ZMQ streams, the web server. */
function sidecarFlags(
  config: SimConfig,
  options: DemoOptions,
  workers: readonly LiveWorkerInfo[],
  ports: readonly number[],
): ServeFlags {
  const vllmHashFlags = config.ctx.vllmHashes === 'sim' ? '' : `,hash=sha256_cbor,seed=${SIM_PYTHONHASHSEED}`;
  const tokenizer = config.router.tokenizer ?? config.ctx.tokenizer;
  return {
    relay: workers.map((w, i) => `${w.id}=${w.url}@${RELAY_HOST}:${ports[i]!}`),
    // the workers' ZMQ publishers (vLLM engine): one --zmq per worker, rank r at port + r
    zmq: workers.flatMap((w) =>
      w.zmq === null
        ? []
        : [
            `${w.id}=${w.zmq.endpoint},engine=vllm,ranks=${w.zmq.ranks}${w.zmq.replay !== null ? `,replay=${w.zmq.replay}` : ''}${vllmHashFlags}`,
          ],
    ),
    // an IPv6 host goes back in brackets, the form the serve grammar reads
    listenAddress: `${options.listen.host.includes(':') ? `[${options.listen.host}]` : options.listen.host}:${options.listen.port}`,
    // --set router.tokenizer / ctx.tokenizer: the sidecar renders text and chat with the router's tokenizer
    ...(tokenizer != null ? { tokenizer } : {}),
  };
}

/** The sidecar of a demo: started once the workers listen (its relays go in front of them), then told the router. */
class DemoSidecar {
  daemon: Daemon | null = null;
  #flags: ServeFlags = {};
  readonly #options: DemoOptions;
  readonly #state: SentinelState;
  readonly #logger: Logger;
  readonly #description: () => string;

  constructor(options: DemoOptions, state: SentinelState, logger: Logger, description: () => string) {
    this.#options = options;
    this.#state = state;
    this.#logger = logger;
    this.#description = description;
  }

  /** starts the daemon relaying `workers`; returns the orchestrator's CTX list (the relay ports) */
  async start(workers: readonly LiveWorkerInfo[]): Promise<Record<string, string>> {
    const ports = await Promise.all(workers.map(() => freePort(RELAY_HOST)));
    this.#flags = sidecarFlags(this.#options.config, this.#options, workers, ports);
    this.daemon = createDaemon(demoTimeouts(await loadConfig(this.#flags)), {
      logger: this.#logger,
      reportDescription: this.#description,
      evaluateEveryMs: STATE_PRESETS.demo.evaluateEveryMs,
      loadConfig: async () => demoTimeouts(await loadConfig(this.#flags)),
      createState: () => tappedStatePort(this.#state, (o) => this.#options.onObservation?.(o)),
    });
    await this.daemon.start();
    return Object.fromEntries(workers.map((w, i) => [w.id, `${RELAY_HOST}:${ports[i]!}`]));
  }

  /** the router's debug endpoint exists once the orchestrator runs: add it (the relays keep running) */
  async watchRouter(debugUrl: string): Promise<void> {
    this.#flags = { ...this.#flags, routerDebug: debugUrl };
    await this.daemon!.reload();
  }
}

function demoUrls(web: { readonly host: string; readonly port: number }): DemoUrls {
  const webHost =
    web.host === '0.0.0.0' || web.host === '::' ? '127.0.0.1' : web.host.includes(':') ? `[${web.host}]` : web.host;
  return {
    landing: `http://${webHost}:${web.port}/`,
    metrics: `http://${webHost}:${web.port}/metrics`,
    ws: `ws://${webHost}:${web.port}/ws`,
  };
}

function startFailed(err: unknown): KvsentinelError {
  return new KvsentinelError('start-failed', `cannot start the demo: ${errorMessage(err)}`, { cause: err });
}

/** The warm-up: the steady-state window opens once the sidecar has counted the target (its count, not the client's). */
class DemoWarmup {
  target = 0;
  trafficStarted: number | null = null;
  warmedUp: CounterMark | null = null;
  #timer: NodeJS.Timeout | undefined;

  start(state: SentinelState, warmupRequests: number, onWarmedUp?: (w: CounterMark) => void): void {
    this.trafficStarted = Date.now();
    this.target = warmupRequests;
    if (warmupRequests <= 0) return;
    this.#timer = setInterval(() => {
      const s = state.snapshot(Date.now());
      if (s.requests < warmupRequests) return;
      clearInterval(this.#timer);
      this.warmedUp = counterMark(s);
      onWarmedUp?.(this.warmedUp);
    }, WARMUP_CHECK_MS);
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  status(): WarmupStatus {
    return { targetRequests: this.target, startedAt: this.trafficStarted, warmedUp: this.warmedUp };
  }
}

/** The audit of what the state saw so far, and the HTML report when `reportFile` is given. */
async function demoReport(
  state: SentinelState,
  sidecar: DemoSidecar,
  warmup: DemoWarmup,
  description: string,
  reportFile: string | undefined,
): Promise<AuditReport> {
  const daemon = sidecar.daemon!;
  // one evaluation at the end for everything the report shows: its headline, its findings, the last plotted interval
  const final = state.evaluate(Date.now());
  const report = buildAuditReport(
    final,
    {
      kind: 'live',
      description,
      observations: daemon.observations(),
      malformed: malformedInputs(daemon.status.list()),
    },
    warmup.warmedUp !== null && warmup.trafficStarted !== null
      ? steadyStateStats(
          { targetRequests: warmup.target, startedAt: warmup.trafficStarted },
          warmup.warmedUp,
          counterMark(final),
        )
      : null,
  );
  if (reportFile !== undefined) {
    const timeline = daemon.timeline();
    timeline?.add(sampleOf(final));
    await writeHtmlReport(reportFile, {
      report,
      samples: timeline?.samples ?? [],
      sampleIntervalMs: timeline?.intervalMs ?? null,
      input: state.diagnosisInput(final.now),
    });
  }
  return report;
}

export async function startDemo(options: DemoOptions): Promise<DemoRun> {
  const { config } = options;
  // counters since the start, findings without hysteresis (what `audit` computes over its window)
  const state = createSentinelState({ ...STATE_PRESETS.demo, mode: 'relay' });
  let quiet = false;
  const logger: Logger = {
    info: () => undefined,
    warn: (m, f) => void (quiet || options.logger.warn(m, f)),
    error: (m, f) => void (quiet || options.logger.error(m, f)),
  };
  const warmup = new DemoWarmup();
  const description = (): string =>
    `kvsentinel demo: simulator preset ${config.preset} behind relays, ${warmup.trafficStarted === null ? 'starting' : `${((Date.now() - warmup.trafficStarted) / 1000).toFixed(0)} s of traffic`}`;
  const sidecar = new DemoSidecar(options, state, logger, description);

  let cluster: LiveCluster;
  try {
    cluster = await startLiveCluster(config, {
      timeScale: options.timeScale,
      ctxUrls: (workers) => sidecar.start(workers),
      ctxWaitMs: 30_000,
    });
  } catch (err) {
    await sidecar.daemon?.stop();
    throw startFailed(err);
  }
  const stop = async (): Promise<void> => {
    quiet = true;
    warmup.stop();
    await cluster.stop();
    await sidecar.daemon!.stop();
  };
  try {
    await sidecar.watchRouter(cluster.debugUrl);
  } catch (err) {
    await stop();
    throw startFailed(err);
  }

  return {
    cluster,
    urls: demoUrls(sidecar.daemon!.webAddress()),
    snapshot: () => state.snapshot(Date.now()),
    startTraffic: ({ warmupRequests = 0, onWarmedUp } = {}) => {
      warmup.start(state, warmupRequests, onWarmedUp);
      return cluster.startWorkload();
    },
    warmup: () => warmup.status(),
    report: ({ interrupted, reportFile }) =>
      demoReport(state, sidecar, warmup, `${description()}${interrupted ? ' (interrupted)' : ''}`, reportFile),
    stop,
  };
}
