export class Orchestrator {
    router;
    workers;
    #scheduler;
    #options;
    #hooks;
    #history = [];
    #seq = 0;
    constructor(scheduler, workers, router, options, hooks = {}) {
        this.#scheduler = scheduler;
        this.workers = new Map(workers.map((w) => [w.id, w]));
        this.router = router;
        this.#options = options;
        this.#hooks = hooks;
    }
    /** decisions with seq > sinceSeq still in the history (oldest first) */
    decisionsSince(sinceSeq) {
        return this.#history.filter((d) => d.seq > sinceSeq);
    }
    send(request, done) {
        const routeRequest = {
            requestId: request.requestId,
            correlationId: request.correlationId,
            prompt: this.#options.tokenDrift ? request.prompt.drifted() : request.prompt,
        };
        const inflight = {};
        for (const [id, worker] of this.workers)
            inflight[id] = worker.inflight;
        const decision = this.router.route(routeRequest);
        const record = {
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
        const worker = this.workers.get(decision.server);
        worker.submit({ requestId: request.requestId, correlationId: request.correlationId, prompt: request.prompt }, (ctx) => {
            this.router.finish(decision.server, routeRequest, ctx.ok);
            this.#hooks.onCtxResult?.(record, ctx);
            const result = {
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
        });
    }
}
//# sourceMappingURL=orchestrator.js.map