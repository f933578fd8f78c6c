import type { Observation } from '../core/observe/observation.js';
import type { RouterSettings } from './routers/router.js';
import { type SimConfig } from './sim-config.js';
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
export declare function serverIds(count: number): string[];
export declare function runVirtual(config: SimConfig, options?: RunVirtualOptions): SimResult;
