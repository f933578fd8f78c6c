// The virtual-time driver: builds the cluster of a SimConfig on a discrete-event clock, runs the closed-loop
// workload to completion in-process, and returns the bug report's numbers. Optionally it emits what kvsentinel
// would observe (relay or watch mode), the canonical request log and the orchestrator log.
import type { Observation } from '../core/observe/observation.js';
import type { KvEvent } from '../core/wire/kv-event.js';
import { ClosedLoopClient } from './client.js';
import { CtxWorker } from './ctx-worker.js';
import { orchestratorLine, pollFailureLine, requestLogLine, routerConfigLines, serverReadyLine } from './log-lines.js';
import { Orchestrator, type RouterDecisionRecord } from './orchestrator.js';
import { RelayModel } from './relay-model.js';
import { Rng } from './rng.js';
import { createRouter, routerStartupLines } from './routers/create-router.js';
import type { RouterSettings } from './routers/router.js';
import { VirtualScheduler } from './scheduler.js';
import { activeFaults, ctxWorkerConfig, SimConfigError, type SimConfig } from './sim-config.js';
import { TurnStats } from './turn-stats.js';

export type TapMode = 'relay' | 'watch';

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

export function runVirtual(config: SimConfig, options: RunVirtualOptions = {}): SimResult {
  assertVirtualConfig(config);
  const scheduler = new VirtualScheduler();
  const emit = options.onObservation;
  const tap: TapMode | null = emit === undefined ? null : (options.tap ?? 'relay');
  const stateIntervalMs = options.stateIntervalMs ?? 1000;
  const log = options.orchestratorLog;
  const logFormat = config.router.logFormat ?? 'trtllm';
  const ids = serverIds(config.ctx.servers);
  const c = config.ctx;
  const workers = ids.map((id) => new CtxWorker(scheduler, ctxWorkerConfig(config, id)));
  const byId = new Map(workers.map((w) => [w.id, w]));
  const relays = new Map<string, RelayModel>();
  if (tap === 'relay' && emit !== undefined) {
    for (const worker of workers) {
      relays.set(worker.id, new RelayModel(worker, scheduler, emit));
    }
  }

  const pollEvents = (server: string): readonly KvEvent[] => {
    const relay = relays.get(server);
    return relay !== undefined ? relay.serve('router') : byId.get(server)!.drainEvents();
  };
  const router = createRouter(config.router, ids, {
    hashAlgo: (server) => byId.get(server)!.serverInfo().kv_cache_hash_algo,
    workerTokensPerBlock: (server) => byId.get(server)!.serverInfo().tokens_per_block ?? null,
    log: (level, message) => log?.(orchestratorLine(scheduler.now(), level, message, [], logFormat)),
    pollEvents,
    onPollFailure: (server, message) => {
      log?.(orchestratorLine(scheduler.now(), 'W', pollFailureLine(server, message), [], logFormat));
      if (tap === 'watch') emit?.({ kind: 'poll-failure', ts: scheduler.now(), server, message });
    },
  });

  // start-up: what the orchestrator logs and what the sidecar learns
  const configuredTpb = config.router.tokensPerBlock === 0 ? null : config.router.tokensPerBlock;
  for (const line of routerConfigLines(router.settings, ids, configuredTpb, logFormat))
    log?.(orchestratorLine(0, 'I', line, [], logFormat));
  for (const worker of workers)
    log?.(orchestratorLine(0, 'I', serverReadyLine(worker.id, worker.serverInfo(), logFormat), [], logFormat));
  for (const line of routerStartupLines(router))
    log?.(orchestratorLine(0, line.level, line.message, line.args, logFormat));
  if (emit !== undefined) {
    for (const worker of workers) {
      const info = worker.serverInfo();
      emit({
        kind: 'server-info',
        ts: 0,
        server: worker.id,
        hashAlgo: info.kv_cache_hash_algo,
        tokensPerBlock: info.tokens_per_block,
      });
    }
    emit({
      kind: 'router-config',
      ts: 0,
      source: tap === 'watch' ? 'orchestrator-log' : 'simulator',
      routerType: router.settings.type,
      tokensPerBlock: router.settings.tokensPerBlock,
      maxBatchSize: router.settings.maxBatchSize,
      backfillBlockHashesOnFinish: router.settings.backfillBlockHashesOnFinish,
      servers: ids,
      ...(router.settings.profile !== undefined
        ? {
            profile: router.settings.profile,
            trackRoutedBlocks: router.settings.trackRoutedBlocks ?? null,
            loadWeight: router.settings.loadWeight ?? null,
          }
        : {}),
    });
  }
  const debugVisible = tap === 'relay' || (tap === 'watch' && options.watchDebugEndpoint !== false);

  const stats = new TurnStats();
  let failed = 0;
  let outputTokens = 0;
  let inflightSum = 0;
  let spreadSum = 0;
  let decisions = 0;
  const onDecision = (d: RouterDecisionRecord): void => {
    let lo = Number.POSITIVE_INFINITY;
    let hi = 0;
    for (const id of ids) {
      const n = d.inflight[id]!;
      inflightSum += n;
      lo = Math.min(lo, n);
      hi = Math.max(hi, n);
    }
    spreadSum += hi - lo;
    decisions++;
    if (emit === undefined) return;
    if (tap === 'relay') {
      emit({
        kind: 'decision',
        ts: d.ts,
        requestId: d.requestId,
        correlationId: d.correlationId,
        server: d.chosen,
        promptTokens: d.prompt.tokens,
        promptTokenCount: d.prompt.tokens.length,
        inflight: d.inflight,
      });
    }
    if (debugVisible && d.candidates !== null) {
      emit({
        kind: 'router-score',
        ts: d.ts,
        seq: d.seq,
        requestId: d.requestId,
        correlationId: d.correlationId,
        chosen: d.chosen,
        candidates: d.candidates,
      });
    }
  };
  const orchestrator = new Orchestrator(
    scheduler,
    workers,
    router,
    {
      tokenDrift: config.router.tokenDrift,
      genOverheadMs: config.gen.overheadMs,
      genMsPerToken: config.gen.msPerToken,
      decisionHistory: 16,
    },
    {
      onDecision,
      onCtxResult: (d, r) => {
        if (!r.ok) failed++;
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
        if (emit === undefined) return;
        if (tap === 'watch' && r.ok) {
          // the request log is written when the response is back: decision and outcome arrive together
          emit({
            kind: 'decision',
            ts: d.ts,
            requestId: d.requestId,
            correlationId: d.correlationId,
            server: d.chosen,
            promptTokens: options.watchPromptTokenIds === true ? d.prompt.tokens : null,
            promptTokenCount: r.promptTokens,
            inflight: null,
          });
        }
        if (tap === 'relay' || r.ok) {
          emit({
            kind: 'outcome',
            ts,
            requestId: d.requestId,
            server: d.chosen,
            ok: r.ok,
            promptTokens: r.ok ? r.promptTokens : null,
            cachedTokens: r.ok ? r.cachedTokens : null,
            latencyMs: ts - d.ts,
          });
        }
      },
    },
  );

  const lastServer = new Map<number, string>();
  let movedTurns = 0;
  const client = new ClosedLoopClient(scheduler, config.workload, orchestrator, {
    onTurn: ({ turn, result, trajectory }) => {
      stats.add(result.promptTokens, result.cachedTokens, turn > 0);
      const previous = lastServer.get(trajectory.index);
      if (previous !== undefined && previous !== result.server) movedTurns++;
      if (turn + 1 >= trajectory.turns.length) lastServer.delete(trajectory.index);
      else lastServer.set(trajectory.index, result.server);
      outputTokens += trajectory.turns[turn]!.outputTokens;
    },
    onTrajectoryDone: (done, total) => options.onProgress?.(done, total, scheduler.now()),
  });

  // periodic work that lives only while the workload runs
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
  if (emit !== undefined && debugVisible) {
    every(stateIntervalMs, () => {
      for (const s of router.state()) {
        emit({
          kind: 'router-state',
          ts: scheduler.now(),
          server: s.server,
          activeRequests: s.activeRequests,
          hashAlgo: s.hashAlgo,
          blockTableSize: s.blockTableSize,
          polls: s.polls,
          pollFailures: s.pollFailures,
        });
      }
    });
  }
  if (c.stallEveryMs > 0) {
    // each server stalls now and then (seeded, identical in every row of a seed)
    workers.forEach((worker, index) => {
      const rng = new Rng(config.workload.seed, 0x57a11 + index);
      const next = (): void => {
        if (client.finished) return;
        worker.stall(rng.exponential(c.stallMs));
        scheduler.at(scheduler.now() + rng.exponential(c.stallEveryMs), next);
      };
      scheduler.at(rng.exponential(c.stallEveryMs), next);
    });
  }
  if (c.restartAtMs !== null) {
    const target = workers[0]!;
    scheduler.at(c.restartAtMs, () => {
      log?.(orchestratorLine(scheduler.now(), 'W', `Server ${target.id} disconnected; restarting`, [], logFormat));
      target.restart();
      scheduler.at(scheduler.now() + c.restartDowntimeMs, () =>
        log?.(
          orchestratorLine(
            scheduler.now(),
            'I',
            serverReadyLine(target.id, target.serverInfo(), logFormat),
            [],
            logFormat,
          ),
        ),
      );
    });
  }

  client.start();
  scheduler.run();

  const snapshot = stats.snapshot();
  const routerState = new Map(router.state().map((s) => [s.server, s]));
  return {
    preset: config.preset,
    requests: snapshot.requests,
    trajectories: client.completedTrajectories,
    cache_hit_ratio: snapshot.cacheHitRatio,
    turn_scatter_ratio: snapshot.turnScatterRatio,
    router: router.settings,
    faults: activeFaults(config),
    prompt_tokens: snapshot.promptTokens,
    cached_tokens: snapshot.cachedTokens,
    follow_up_turns: snapshot.followUpTurns,
    scattered_turns: snapshot.scatteredTurns,
    failed_requests: failed,
    mean_input_tokens: snapshot.requests === 0 ? 0 : snapshot.promptTokens / snapshot.requests,
    mean_output_tokens: snapshot.requests === 0 ? 0 : outputTokens / snapshot.requests,
    virtual_seconds: scheduler.now() / 1000,
    mean_ctx_inflight: decisions === 0 ? 0 : inflightSum / decisions / ids.length,
    mean_inflight_spread: decisions === 0 ? 0 : spreadSum / decisions,
    moved_turn_ratio: snapshot.followUpTurns === 0 ? 0 : movedTurns / snapshot.followUpTurns,
    servers: workers.map((w) => {
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
