// The virtual-time driver: builds the cluster of a SimConfig on a discrete-event clock, runs the closed-loop
// workload to completion in-process, and returns the bug report's numbers. Optionally it emits what kvsentinel
// would observe (relay or watch mode), the canonical request log and the orchestrator log.
import type { Observation } from '../core/observe/observation.js';
import type { KvEvent } from '../core/wire/kv-event.js';
import { ClosedLoopClient } from './client.js';
import { scheduleCtxStalls } from './ctx-stalls.js';
import { CtxWorker } from './ctx-worker.js';
import {
  orchestratorLine,
  pollFailureLine,
  requestLogLine,
  routerConfigLines,
  serverReadyLine,
  type LogLevel,
} from './log-lines.js';
import { Orchestrator } from './orchestrator.js';
import { RelayModel } from './relay-model.js';
import { createRouter, routerStartupLines } from './routers/create-router.js';
import type { Router, RouterSettings } from './routers/router.js';
import { VirtualScheduler } from './scheduler.js';
import { activeFaults, ctxWorkerConfig, SimConfigError, type SimConfig } from './sim-config.js';
import { InflightStats, TurnTally } from './turn-stats.js';
import {
  emitCtxResult,
  emitDecision,
  emitRouterState,
  emitStartup,
  type TapMode,
  type VirtualTapOptions,
} from './virtual-tap.js';

export type { TapMode } from './virtual-tap.js';

export interface RunVirtualOptions {
  /** receives the sidecar's view of the run */
  readonly onObservation?: (observation: Observation) => void;
  /** relay (default when onObservation is set): kvsentinel is the sole consumer of each worker's events */
  readonly tap?: TapMode;
  /** watch mode: also report router-state / router-score as the debug endpoint would (default true) */
  readonly watchDebugEndpoint?: boolean;
  /** watch mode: the request log carries prompt_token_ids (decisions then have promptTokens) */
  readonly watchPromptTokenIds?: boolean;
  /** canonical request log lines (JSONL) */
  readonly requestLog?: (line: string) => void;
  readonly requestLogPromptTokenIds?: boolean;
  /** orchestrator log lines (TensorRT-LLM format) */
  readonly orchestratorLog?: (line: string) => void;
  /** called after each finished trajectory */
  readonly onProgress?: (done: number, total: number, virtualMs: number) => void;
  /** cadence of router-state observations and of the relay's own drains (virtual ms) */
  readonly stateIntervalMs?: number;
}

export interface ServerSummary {
  readonly server: string;
  readonly requests: number;
  readonly promptTokens: number;
  readonly cachedTokens: number;
  readonly eventsEmitted: number;
  readonly eventsDropped: number;
  readonly eventsDrained: number;
  readonly drains: number;
  readonly routerBlockTableSize: number | null;
  readonly routerPolls: number;
  readonly routerPollFailures: number;
}

export interface SimResult {
  readonly preset: string;
  readonly requests: number;
  readonly trajectories: number;
  readonly cache_hit_ratio: number;
  readonly turn_scatter_ratio: number;
  readonly router: RouterSettings;
  readonly faults: readonly string[];
  readonly prompt_tokens: number;
  readonly cached_tokens: number;
  readonly follow_up_turns: number;
  readonly scattered_turns: number;
  readonly failed_requests: number;
  readonly mean_input_tokens: number;
  readonly mean_output_tokens: number;
  readonly virtual_seconds: number;
  /** CTX requests in flight per server, averaged over decisions */
  readonly mean_ctx_inflight: number;
  /** max − min in-flight across servers, averaged over decisions */
  readonly mean_inflight_spread: number;
  /** follow-up turns served on another server than the trajectory's previous turn */
  readonly moved_turn_ratio: number;
  readonly servers: readonly ServerSummary[];
}

export function serverIds(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `ctx${i}`);
}

/** The virtual driver models token ids, not text: real tokenizers need the live one. Throws SimConfigError. */
export function assertVirtualConfig(config: SimConfig): void {
  for (const [key, path] of [
    ['ctx.tokenizer', config.ctx.tokenizer],
    ['router.tokenizer', config.router.tokenizer],
  ] as const) {
    if (path !== null && path !== undefined)
      throw new SimConfigError(
        `--set ${key}=${path}: real tokenizers run in the live simulator only (sim serve, demo)`,
      );
  }
}

/** The cluster of one virtual run: its clock, workers, the relays in front of them and the orchestrator's log. */
interface VirtualCluster {
  readonly config: SimConfig;
  readonly scheduler: VirtualScheduler;
  readonly ids: readonly string[];
  readonly workers: readonly CtxWorker[];
  readonly byId: ReadonlyMap<string, CtxWorker>;
  /** relay tap only: one per worker, the sole consumer of its events */
  readonly relays: ReadonlyMap<string, RelayModel>;
  /** the sidecar's view; null without onObservation */
  readonly tap: VirtualTapOptions | null;
  /** one orchestrator log line at virtual time `ts` (nothing without orchestratorLog) */
  log(ts: number, level: LogLevel, message: string, args?: readonly (string | number)[]): void;
}

function buildCluster(config: SimConfig, options: RunVirtualOptions): VirtualCluster {
  const scheduler = new VirtualScheduler();
  const emit = options.onObservation;
  const tapMode: TapMode | null = emit === undefined ? null : (options.tap ?? 'relay');
  const ids = serverIds(config.ctx.servers);
  const workers = ids.map((id) => new CtxWorker(scheduler, ctxWorkerConfig(config, id)));
  const relays = new Map<string, RelayModel>();
  if (tapMode === 'relay' && emit !== undefined) {
    for (const worker of workers) relays.set(worker.id, new RelayModel(worker, scheduler, emit));
  }
  const logFormat = config.router.logFormat ?? 'trtllm';
  const orchestratorLog = options.orchestratorLog;
  return {
    config,
    scheduler,
    ids,
    workers,
    byId: new Map(workers.map((w) => [w.id, w])),
    relays,
    tap:
      emit === undefined || tapMode === null
        ? null
        : {
            emit,
            tap: tapMode,
            debugVisible: tapMode === 'relay' || options.watchDebugEndpoint !== false,
            watchPromptTokenIds: options.watchPromptTokenIds === true,
          },
    log: (ts, level, message, args = []) => orchestratorLog?.(orchestratorLine(ts, level, message, args, logFormat)),
  };
}

/** The orchestrator's router: it polls through the relay when there is one, else drains the worker itself. */
function buildRouter(cluster: VirtualCluster): Router {
  const { scheduler, byId, relays, tap } = cluster;
  const pollEvents = (server: string): readonly KvEvent[] => {
    const relay = relays.get(server);
    return relay !== undefined ? relay.serve('router') : byId.get(server)!.drainEvents();
  };
  return createRouter(cluster.config.router, cluster.ids, {
    hashAlgo: (server) => byId.get(server)!.serverInfo().kv_cache_hash_algo,
    workerTokensPerBlock: (server) => byId.get(server)!.serverInfo().tokens_per_block ?? null,
    log: (level, message) => cluster.log(scheduler.now(), level, message),
    pollEvents,
    onPollFailure: (server, message) => {
      cluster.log(scheduler.now(), 'W', pollFailureLine(server, message));
      if (tap?.tap === 'watch') tap.emit({ kind: 'poll-failure', ts: scheduler.now(), server, message });
    },
  });
}

/** Start-up: what the orchestrator logs and what the sidecar learns. */
function announceStartup(cluster: VirtualCluster, router: Router): void {
  const { config, ids, workers } = cluster;
  const logFormat = config.router.logFormat ?? 'trtllm';
  const configuredTpb = config.router.tokensPerBlock === 0 ? null : config.router.tokensPerBlock;
  for (const line of routerConfigLines(router.settings, ids, configuredTpb, logFormat)) cluster.log(0, 'I', line);
  for (const worker of workers) cluster.log(0, 'I', serverReadyLine(worker.id, worker.serverInfo(), logFormat));
  for (const line of routerStartupLines(router)) cluster.log(0, line.level, line.message, line.args);
  if (cluster.tap !== null) emitStartup(cluster.tap, workers, router, ids);
}

function buildOrchestrator(
  cluster: VirtualCluster,
  router: Router,
  options: RunVirtualOptions,
  inflight: InflightStats,
  failures: { count: number },
): Orchestrator {
  const { config, scheduler, tap } = cluster;
  return new Orchestrator(
    scheduler,
    cluster.workers,
    router,
    {
      tokenDrift: config.router.tokenDrift,
      genOverheadMs: config.gen.overheadMs,
      genMsPerToken: config.gen.msPerToken,
      decisionHistory: 16,
    },
    {
      onDecision: (d) => {
        inflight.add(d);
        if (tap !== null) emitDecision(tap, d);
      },
      onCtxResult: (d, r) => {
        if (!r.ok) failures.count++;
        const ts = scheduler.now();
        if (r.ok && options.requestLog !== undefined) {
          options.requestLog(
            requestLogLine({
              ts,
              requestId: d.requestId,
              correlationId: d.correlationId,
              ctxServer: d.chosen,
              promptTokens: r.promptTokens,
              cachedTokens: r.cachedTokens,
              ...(options.requestLogPromptTokenIds === true ? { promptTokenIds: d.prompt.tokens } : {}),
            }),
          );
        }
        if (tap !== null) emitCtxResult(tap, d, r, ts);
      },
    },
  );
}

/** Periodic work that lives only while the workload runs, and the faults on the clock. */
function scheduleBackground(
  cluster: VirtualCluster,
  router: Router,
  client: ClosedLoopClient,
  stateIntervalMs: number,
): void {
  const { config, scheduler, workers, relays, tap } = cluster;
  const c = config.ctx;
  const every = (periodMs: number, task: () => void): void => {
    const tick = (): void => {
      if (client.finished) return;
      task();
      scheduler.at(scheduler.now() + periodMs, tick);
    };
    scheduler.at(scheduler.now() + periodMs, tick);
  };
  if (c.competingConsumer) {
    every(c.competitorPeriodMs, () => {
      for (const worker of workers) {
        try {
          worker.drainEvents();
        } catch {
          // the competitor's own failures are invisible to everyone else
        }
      }
    });
  }
  if (relays.size > 0) {
    every(stateIntervalMs, () => {
      for (const relay of relays.values()) relay.pull();
    });
  }
  if (tap !== null && tap.debugVisible) every(stateIntervalMs, () => emitRouterState(tap, router, scheduler.now()));
  scheduleCtxStalls(scheduler, workers, config, () => !client.finished);
  if (c.restartAtMs !== null) {
    const logFormat = config.router.logFormat ?? 'trtllm';
    const target = workers[0]!;
    scheduler.at(c.restartAtMs, () => {
      cluster.log(scheduler.now(), 'W', `Server ${target.id} disconnected; restarting`);
      target.restart();
      scheduler.at(scheduler.now() + c.restartDowntimeMs, () =>
        cluster.log(scheduler.now(), 'I', serverReadyLine(target.id, target.serverInfo(), logFormat)),
      );
    });
  }
}

function summarize(
  cluster: VirtualCluster,
  router: Router,
  client: ClosedLoopClient,
  tally: TurnTally,
  inflight: InflightStats,
  failed: number,
): SimResult {
  const snapshot = tally.stats.snapshot();
  const routerState = new Map(router.state().map((s) => [s.server, s]));
  return {
    preset: cluster.config.preset,
    requests: snapshot.requests,
    trajectories: client.completedTrajectories,
    cache_hit_ratio: snapshot.cacheHitRatio,
    turn_scatter_ratio: snapshot.turnScatterRatio,
    router: router.settings,
    faults: activeFaults(cluster.config),
    prompt_tokens: snapshot.promptTokens,
    cached_tokens: snapshot.cachedTokens,
    follow_up_turns: snapshot.followUpTurns,
    scattered_turns: snapshot.scatteredTurns,
    failed_requests: failed,
    mean_input_tokens: snapshot.requests === 0 ? 0 : snapshot.promptTokens / snapshot.requests,
    mean_output_tokens: snapshot.requests === 0 ? 0 : tally.outputTokens / snapshot.requests,
    virtual_seconds: cluster.scheduler.now() / 1000,
    mean_ctx_inflight: inflight.meanInflight,
    mean_inflight_spread: inflight.meanSpread,
    moved_turn_ratio: snapshot.followUpTurns === 0 ? 0 : tally.movedTurns / snapshot.followUpTurns,
    servers: cluster.workers.map((w) => {
      const rs = routerState.get(w.id);
      return {
        server: w.id,
        requests: w.stats.requests,
        promptTokens: w.stats.promptTokens,
        cachedTokens: w.stats.cachedTokens,
        eventsEmitted: w.events.stats.emitted,
        eventsDropped: w.events.stats.dropped,
        eventsDrained: w.events.stats.drained,
        drains: w.events.stats.drains,
        routerBlockTableSize: rs?.blockTableSize ?? null,
        routerPolls: rs?.polls ?? 0,
        routerPollFailures: rs?.pollFailures ?? 0,
      };
    }),
  };
}

export function runVirtual(config: SimConfig, options: RunVirtualOptions = {}): SimResult {
  assertVirtualConfig(config);
  const cluster = buildCluster(config, options);
  const router = buildRouter(cluster);
  announceStartup(cluster, router);
  const inflight = new InflightStats(cluster.ids);
  const failures = { count: 0 };
  const orchestrator = buildOrchestrator(cluster, router, options, inflight, failures);
  const tally = new TurnTally();
  const client = new ClosedLoopClient(cluster.scheduler, config.workload, orchestrator, {
    onTurn: (record) => tally.add(record),
    onTrajectoryDone: (done, total) => options.onProgress?.(done, total, cluster.scheduler.now()),
  });
  scheduleBackground(cluster, router, client, options.stateIntervalMs ?? 1000);
  client.start();
  cluster.scheduler.run();
  return summarize(cluster, router, client, tally, inflight, failures.count);
}
