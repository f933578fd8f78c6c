// The live HTTP driver: a SimConfig's CTX workers and orchestrator on real ports, one LiveScheduler (the model's
// clock on real time, sped up by `timeScale`), the workload on demand, the fault knobs wired to the wire.
import { KvsentinelError } from '../../core/errors.js';
import { scheduleCtxStalls } from '../ctx-stalls.js';
import { serverIds } from '../run-virtual.js';
import { ctxWorkerConfig, type SimConfig } from '../sim-config.js';
import { LiveCtxWorker } from './live-ctx-worker.js';
import { LiveOrchestrator, type CtxTarget } from './live-orchestrator.js';
import { LiveScheduler } from './live-scheduler.js';
import { LiveWorkload, type LiveTurnRecord } from './live-workload.js';
import { loadSimTokenizers, type SimTokenizers } from './sim-tokenizers.js';

export interface LiveWorkerInfo {
  readonly id: string;
  /** http://host:port */
  readonly url: string;
  /** host:port */
  readonly address: string;
  /** rank 0's ZMQ KV-event endpoints when ctx.kv_events_publisher is set (rank r at port + r) */
  readonly zmq: {
    readonly endpoint: string;
    readonly replay: string | null;
    readonly format: string;
    readonly ranks: number;
  } | null;
}

export interface LiveClusterOptions {
  /** listen host of every server (default 127.0.0.1) */
  readonly host?: string;
  /** workers on portBase, portBase+1 …, the orchestrator on portBase+servers; absent = free ports (port 0) */
  readonly portBase?: number;
  /** virtual ms per real ms (default 1): 10 runs the model's timings ten times faster */
  readonly timeScale?: number;
  /**
   * Where the orchestrator sends CTX requests and event polls, per worker id (`host:port`, e.g. a relay port).
   * A function receives the started workers first (start relays in front of them there). Missing ids: the worker.
   */
  readonly ctxUrls?:
    | Readonly<Record<string, string>>
    | ((workers: readonly LiveWorkerInfo[]) => Promise<Readonly<Record<string, string>>>);
  /** how long the orchestrator waits for every CTX address to answer /server_info (real ms, default 30 s) */
  readonly ctxWaitMs?: number;
  readonly requestLog?: (line: string) => void;
  readonly requestLogPromptTokenIds?: boolean;
  readonly orchestratorLog?: (line: string) => void;
  /** perf_metrics_max_requests of each worker (default 1000) */
  readonly perfMetricsMaxRequests?: number;
}

export interface StartWorkloadOptions {
  /** overrides of the config's workload section */
  readonly trajectories?: number;
  readonly concurrency?: number;
  readonly onTurn?: (record: LiveTurnRecord) => void;
  readonly onTrajectoryDone?: (done: number, total: number) => void;
}

export interface LiveCluster {
  readonly config: SimConfig;
  readonly scheduler: LiveScheduler;
  readonly workers: readonly LiveWorkerInfo[];
  readonly orchestratorUrl: string;
  /** GET this (optionally ?since=SEQ) for docs/design.md §8 */
  readonly debugUrl: string;
  /** the orchestrator's record of applied events, per server (GET) */
  readonly appliedEventsUrl: string;
  /** the orchestrator's CTX list: worker id → host:port it sends to */
  readonly ctxAddresses: Readonly<Record<string, string>>;
  readonly orchestrator: LiveOrchestrator;
  worker(id: string): LiveCtxWorker;
  /** starts the closed-loop workload through the orchestrator (arms the ctx.restart_at fault on first call) */
  startWorkload(options?: StartWorkloadOptions): LiveWorkload;
  /** schedules ctx.restart_at relative to now (startWorkload does it; call it to run faults without a workload) */
  armFaults(): void;
  /** crash and restart a worker now (connection refused during ctx.restart_downtime) */
  restartWorker(id: string): Promise<void>;
  /** stops workloads, servers and timers; idempotent */
  stop(): Promise<void>;
}

/**
 * Routers in front of vLLM / SGLang (llm-d, Dynamo, the SGLang gateway) subscribe to the workers' streams; the
 * in-tree TensorRT-LLM router only polls /kv_cache_events, which the streaming publisher leaves empty.
 */
function routerReadsStream(config: SimConfig): boolean {
  return config.ctx.kvEventsPublisher !== 'none' && config.ctx.kvEventsPublisher !== 'trtllm';
}

/** the listen port of the server at `offset` (workers from 0, the orchestrator after them); 0 = a free port */
function portAt(options: LiveClusterOptions, offset: number): number {
  return options.portBase === undefined ? 0 : options.portBase + offset;
}

function createWorkers(
  config: SimConfig,
  options: LiveClusterOptions,
  scheduler: LiveScheduler,
  tokenizers: SimTokenizers,
): LiveCtxWorker[] {
  const c = config.ctx;
  return serverIds(c.servers).map(
    (id, i) =>
      new LiveCtxWorker(scheduler, ctxWorkerConfig(config, id), {
        host: options.host ?? '127.0.0.1',
        port: portAt(options, i),
        competitorPeriodMs: c.competingConsumer ? c.competitorPeriodMs : null,
        perfMetricsMaxRequests: options.perfMetricsMaxRequests ?? 1000,
        keepAliveTimeoutMs: c.keepAliveTimeoutMs,
        tokenizer: tokenizers.ctx,
        kvEventsPublisher:
          c.kvEventsPublisher === 'none'
            ? null
            : { format: c.kvEventsPublisher, replay: c.kvEventsReplay, vllmHashes: c.vllmHashes },
        streamCopy: routerReadsStream(config),
      }),
  );
}

function workerInfo(w: LiveCtxWorker): LiveWorkerInfo {
  return {
    id: w.id,
    url: w.url,
    address: w.address,
    zmq:
      w.publisher === null
        ? null
        : {
            endpoint: w.publisher.endpoint,
            replay: w.publisher.replayEndpoint,
            format: w.publisher.options.format,
            ranks: w.worker.config.ranks,
          },
  };
}

/** The orchestrator's CTX list: each worker's own address unless options.ctxUrls names another for it. */
async function ctxTargets(
  workers: readonly LiveCtxWorker[],
  infos: readonly LiveWorkerInfo[],
  options: LiveClusterOptions,
): Promise<CtxTarget[]> {
  const overrides = typeof options.ctxUrls === 'function' ? await options.ctxUrls(infos) : (options.ctxUrls ?? {});
  for (const key of Object.keys(overrides)) {
    if (!workers.some((w) => w.id === key))
      throw new KvsentinelError(
        'usage',
        `ctx url for ${key}: no such worker (workers: ${workers.map((w) => w.id).join(', ')})`,
      );
  }
  return workers.map((w) => ({ id: w.id, address: stripScheme(overrides[w.id] ?? w.address) }));
}

function createOrchestrator(
  config: SimConfig,
  options: LiveClusterOptions,
  scheduler: LiveScheduler,
  tokenizers: SimTokenizers,
  workers: readonly LiveCtxWorker[],
  targets: readonly CtxTarget[],
): LiveOrchestrator {
  const byAddress = new Map(targets.map((t, i) => [t.address, workers[i]!]));
  return new LiveOrchestrator(scheduler, {
    host: options.host ?? '127.0.0.1',
    port: portAt(options, workers.length),
    targets,
    router: config.router,
    gen: config.gen,
    routerTokenizer: tokenizers.router,
    ...(routerReadsStream(config)
      ? { streamEvents: (address: string) => byAddress.get(address)?.takeStreamEvents() ?? [] }
      : {}),
    serverInfoTimeoutMs: options.ctxWaitMs ?? 30_000,
    ...(options.requestLog !== undefined ? { requestLog: options.requestLog } : {}),
    ...(options.requestLogPromptTokenIds !== undefined
      ? { requestLogPromptTokenIds: options.requestLogPromptTokenIds }
      : {}),
    ...(options.orchestratorLog !== undefined ? { orchestratorLog: options.orchestratorLog } : {}),
  });
}

/** The started servers: the workers (as themselves and as their callers see them), the CTX list, the orchestrator. */
interface StartedServers {
  readonly workers: readonly LiveCtxWorker[];
  readonly infos: readonly LiveWorkerInfo[];
  readonly targets: readonly CtxTarget[];
  readonly orchestrator: LiveOrchestrator;
}

/** The workloads started so far (stop ends them), whether the cluster stopped, and stop. */
interface Lifecycle {
  readonly workloads: LiveWorkload[];
  stopped(): boolean;
  stop(): Promise<void>;
}

/**
 * What the running cluster offers its caller: its addresses, the workload, the faults, stop. `chat`: a tokenizer on
 * either side only means something for text, so the workload then sends chat messages.
 */
function clusterHandle(
  config: SimConfig,
  scheduler: LiveScheduler,
  chat: boolean,
  servers: StartedServers,
  lifecycle: Lifecycle,
): LiveCluster {
  const { workers, orchestrator: orch } = servers;
  const byId = new Map(workers.map((w) => [w.id, w]));
  const workerById = (id: string): LiveCtxWorker => {
    const w = byId.get(id);
    if (w === undefined)
      throw new KvsentinelError('internal', `no worker ${id} (workers: ${[...byId.keys()].join(', ')})`);
    return w;
  };
  let armed = false;
  const armFaults = (): void => {
    if (armed) return;
    armed = true;
    const at = config.ctx.restartAtMs;
    if (at !== null) scheduler.at(scheduler.now() + at, () => void workers[0]!.restart());
  };
  const startWorkload = (opts: StartWorkloadOptions = {}): LiveWorkload => {
    if (lifecycle.stopped()) throw new KvsentinelError('internal', 'the cluster is stopped');
    armFaults();
    const workload = new LiveWorkload(scheduler, {
      url: orch.url,
      workload: {
        ...config.workload,
        ...(opts.trajectories !== undefined ? { trajectories: opts.trajectories } : {}),
        ...(opts.concurrency !== undefined ? { concurrency: opts.concurrency } : {}),
      },
      chat,
      ...(opts.onTurn !== undefined ? { onTurn: opts.onTurn } : {}),
      ...(opts.onTrajectoryDone !== undefined ? { onTrajectoryDone: opts.onTrajectoryDone } : {}),
    });
    lifecycle.workloads.push(workload);
    workload.start();
    // ctx.stall_every: each server stalls now and then while a workload runs (seeded like the virtual driver)
    let running = true;
    void workload.done.then(() => {
      running = false;
    });
    scheduleCtxStalls(
      scheduler,
      workers.map((w) => w.worker),
      config,
      () => running,
    );
    return workload;
  };
  return {
    config,
    scheduler,
    workers: servers.infos,
    orchestratorUrl: orch.url,
    debugUrl: `${orch.url}/debug/router`,
    appliedEventsUrl: `${orch.url}/debug/applied-events`,
    ctxAddresses: Object.fromEntries(servers.targets.map((t) => [t.id, t.address])),
    orchestrator: orch,
    worker: workerById,
    startWorkload,
    armFaults,
    restartWorker: async (id) => {
      await workerById(id).restart();
    },
    stop: () => lifecycle.stop(),
  };
}

export async function startLiveCluster(config: SimConfig, options: LiveClusterOptions = {}): Promise<LiveCluster> {
  // before any port opens: a bad tokenizer folder is a configuration error
  const tokenizers = loadSimTokenizers(config);
  const scheduler = new LiveScheduler(options.timeScale ?? 1);
  const workers = createWorkers(config, options, scheduler, tokenizers);
  const workloads: LiveWorkload[] = [];
  let orchestrator: LiveOrchestrator | null = null;
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await Promise.all(workloads.map((w) => w.stop()));
    scheduler.stop();
    await orchestrator?.stop();
    await Promise.all(workers.map((w) => w.stop()));
  };

  try {
    await Promise.all(workers.map((w) => w.start()));
    const infos = workers.map(workerInfo);
    const targets = await ctxTargets(workers, infos, options);
    const orch = createOrchestrator(config, options, scheduler, tokenizers, workers, targets);
    orchestrator = orch;
    await orch.start();
    return clusterHandle(
      config,
      scheduler,
      tokenizers.ctx !== null || tokenizers.router !== null,
      { workers, infos, targets, orchestrator: orch },
      { workloads, stopped: () => stopped, stop },
    );
  } catch (err) {
    await stop();
    throw err;
  }
}

/** accepts host:port or http://host:port[/] */
function stripScheme(address: string): string {
  return address.replace(/^https?:\/\//i, '').replace(/\/+$/, '');
}
