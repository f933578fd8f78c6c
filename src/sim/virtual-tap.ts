// What kvsentinel would observe of a virtual run (src/core/observe/observation.ts): through the relay (the sole
// consumer of every worker's events, which also sees each decision as it is sent) or watching (the request log, the
// orchestrator log and, unless told otherwise, the router's debug endpoint).
import type { Observation } from '../core/observe/observation.js';
import type { CtxResult, CtxWorker } from './ctx-worker.js';
import type { RouterDecisionRecord } from './orchestrator.js';
import type { Router } from './routers/router.js';

export type TapMode = 'relay' | 'watch';

export interface VirtualTapOptions {
  readonly emit: (observation: Observation) => void;
  readonly tap: TapMode;
  /** router-state / router-score as the debug endpoint shows them */
  readonly debugVisible: boolean;
  /** watch: the request log carries prompt_token_ids (decisions then have promptTokens) */
  readonly watchPromptTokenIds: boolean;
}

/** At the start: every worker's /server_info and the router's configuration. */
export function emitStartup(
  tap: VirtualTapOptions,
  workers: readonly CtxWorker[],
  router: Router,
  ids: readonly string[],
): void {
  for (const worker of workers) {
    const info = worker.serverInfo();
    tap.emit({
      kind: 'server-info',
      ts: 0,
      server: worker.id,
      hashAlgo: info.kv_cache_hash_algo,
      tokensPerBlock: info.tokens_per_block,
    });
  }
  const settings = router.settings;
  tap.emit({
    kind: 'router-config',
    ts: 0,
    source: tap.tap === 'watch' ? 'orchestrator-log' : 'simulator',
    routerType: settings.type,
    tokensPerBlock: settings.tokensPerBlock,
    maxBatchSize: settings.maxBatchSize,
    backfillBlockHashesOnFinish: settings.backfillBlockHashesOnFinish,
    servers: ids,
    ...(settings.profile !== undefined
      ? {
          profile: settings.profile,
          trackRoutedBlocks: settings.trackRoutedBlocks ?? null,
          loadWeight: settings.loadWeight ?? null,
        }
      : {}),
  });
}

function decisionObservation(
  d: RouterDecisionRecord,
  promptTokens: Uint32Array | null,
  promptTokenCount: number,
  inflight: Readonly<Record<string, number>> | null,
): Observation {
  return {
    kind: 'decision',
    ts: d.ts,
    requestId: d.requestId,
    correlationId: d.correlationId,
    server: d.chosen,
    promptTokens,
    promptTokenCount,
    inflight,
  };
}

/** A decision as the orchestrator sends it: the relay sees it, the debug endpoint scores it. */
export function emitDecision(tap: VirtualTapOptions, d: RouterDecisionRecord): void {
  if (tap.tap === 'relay') tap.emit(decisionObservation(d, d.prompt.tokens, d.prompt.tokens.length, d.inflight));
  if (tap.debugVisible && d.candidates !== null) {
    tap.emit({
      kind: 'router-score',
      ts: d.ts,
      seq: d.seq,
      requestId: d.requestId,
      correlationId: d.correlationId,
      chosen: d.chosen,
      candidates: d.candidates,
    });
  }
}

/** A CTX response at `ts`: the relay sees every one, the request log only the successful ones. */
export function emitCtxResult(tap: VirtualTapOptions, d: RouterDecisionRecord, r: CtxResult, ts: number): void {
  if (tap.tap === 'watch' && r.ok) {
    // the request log is written when the response is back: decision and outcome arrive together
    tap.emit(decisionObservation(d, tap.watchPromptTokenIds ? d.prompt.tokens : null, r.promptTokens, null));
  }
  if (tap.tap === 'relay' || r.ok) {
    tap.emit({
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
}

/** The router's per-server state as the debug endpoint shows it at `ts`. */
export function emitRouterState(tap: VirtualTapOptions, router: Router, ts: number): void {
  for (const s of router.state()) {
    tap.emit({
      kind: 'router-state',
      ts,
      server: s.server,
      activeRequests: s.activeRequests,
      hashAlgo: s.hashAlgo,
      blockTableSize: s.blockTableSize,
      polls: s.polls,
      pollFailures: s.pollFailures,
    });
  }
}
