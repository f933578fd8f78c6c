import type { CtxResult, CtxWorker } from './ctx-worker.js';
import type { Prompt } from './prompt.js';
import type { RouteCandidate, Router } from './routers/router.js';
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
/** What the router decided for one CTX request (the debug endpoint's decisions, design.md §8). */
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
export declare class Orchestrator {
    #private;
    readonly router: Router;
    readonly workers: ReadonlyMap<string, CtxWorker>;
    constructor(scheduler: Scheduler, workers: readonly CtxWorker[], router: Router, options: OrchestratorOptions, hooks?: OrchestratorHooks);
    /** decisions with seq > sinceSeq still in the history (oldest first) */
    decisionsSince(sinceSeq: number): RouterDecisionRecord[];
    send(request: TurnRequest, done: (result: TurnResult) => void): void;
}
