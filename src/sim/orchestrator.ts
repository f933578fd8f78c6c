// The disaggregated orchestrator (docs/trtllm-wire.md §5): a request becomes a context_only request (with
// disaggregated_params) sent to the CTX server the router picks; finish_request runs when the CTX response
// returns (decrement load, backfill, poll that server's events inline); then the GEN step decodes the output.
// The GEN response's usage carries the CTX server's prompt_tokens and cached_tokens.
import type { CtxResult, CtxWorker } from './ctx-worker.js';
import type { Prompt } from './prompt.js';
import type { RouteCandidate, RouteRequest, Router } from './routers/router.js';
import type { Scheduler } from './scheduler.js';

export interface TurnRequest {
  readonly requestId: string;
  readonly correlationId: string | null;
  readonly prompt: Prompt;
  /** tokens the GEN step decodes */
  readonly outputTokens: number;
}

export interface TurnResult {
  readonly requestId: string;
  readonly ok: boolean;
  readonly error: string | null;
  readonly server: string;
  readonly promptTokens: number;
  readonly cachedTokens: number;
  readonly ctx: CtxResult;
}

/** What the router decided for one CTX request (the debug endpoint's decisions, docs/design.md §8). */
export interface RouterDecisionRecord {
  readonly seq: number;
  readonly ts: number;
  readonly requestId: string;
  readonly correlationId: string | null;
  readonly chosen: string;
  readonly candidates: readonly RouteCandidate[] | null;
  /** CTX requests in flight per server just before this one was sent */
  readonly inflight: Readonly<Record<string, number>>;
  /** the prompt sent to the CTX server */
  readonly prompt: Prompt;
}

export interface OrchestratorOptions {
  /** router.token_drift: the router hashes a differently tokenized prompt */
  readonly tokenDrift: boolean;
  readonly genOverheadMs: number;
  readonly genMsPerToken: number;
  /** decisions kept for the debug endpoint */
  readonly decisionHistory: number;
}

export interface OrchestratorHooks {
  onDecision?(decision: RouterDecisionRecord): void;
  onCtxResult?(decision: RouterDecisionRecord, result: CtxResult): void;
}

export class Orchestrator {
  readonly router: Router;
  readonly workers: ReadonlyMap<string, CtxWorker>;
  readonly #scheduler: Scheduler;
  readonly #options: OrchestratorOptions;
  readonly #hooks: OrchestratorHooks;
  readonly #history: RouterDecisionRecord[] = [];
  #seq = 0;

  constructor(
    scheduler: Scheduler,
    workers: readonly CtxWorker[],
    router: Router,
    options: OrchestratorOptions,
    hooks: OrchestratorHooks = {},
  ) {
    this.#scheduler = scheduler;
    this.workers = new Map(workers.map((w) => [w.id, w]));
    this.router = router;
    this.#options = options;
    this.#hooks = hooks;
  }

  /** decisions with seq > sinceSeq still in the history (oldest first) */
  decisionsSince(sinceSeq: number): RouterDecisionRecord[] {
    return this.#history.filter((d) => d.seq > sinceSeq);
  }

  send(request: TurnRequest, done: (result: TurnResult) => void): void {
    const routeRequest: RouteRequest = {
      requestId: request.requestId,
      correlationId: request.correlationId,
      prompt: this.#options.tokenDrift ? request.prompt.drifted() : request.prompt,
    };
    const inflight: Record<string, number> = {};
    for (const [id, worker] of this.workers) inflight[id] = worker.inflight;
    const decision = this.router.route(routeRequest);
    const record: RouterDecisionRecord = {
      seq: ++this.#seq,
      ts: this.#scheduler.now(),
      requestId: request.requestId,
      correlationId: request.correlationId,
      chosen: decision.server,
      candidates: decision.candidates,
      inflight,
      prompt: request.prompt,
    };
    this.#history.push(record);
    if (this.#history.length > this.#options.decisionHistory * 2)
      this.#history.splice(0, this.#history.length - this.#options.decisionHistory);
    this.#hooks.onDecision?.(record);
    const worker = this.workers.get(decision.server)!;
    worker.submit(
      { requestId: request.requestId, correlationId: request.correlationId, prompt: request.prompt },
      (ctx) => {
        this.router.finish(decision.server, routeRequest, ctx.ok);
        this.#hooks.onCtxResult?.(record, ctx);
        // served: its hashes are not needed during the GEN step or after (a retry builds a new prompt)
        request.prompt.release?.();
        if (routeRequest.prompt !== request.prompt) routeRequest.prompt.release?.();
        const result: TurnResult = {
          requestId: request.requestId,
          ok: ctx.ok,
          error: ctx.error,
          server: decision.server,
          promptTokens: ctx.promptTokens,
          cachedTokens: ctx.cachedTokens,
          ctx,
        };
        if (!ctx.ok) {
          done(result);
          return;
        }
        const genMs = this.#options.genOverheadMs + request.outputTokens * this.#options.genMsPerToken;
        this.#scheduler.at(this.#scheduler.now() + genMs, () => done(result));
      },
    );
  }
}
