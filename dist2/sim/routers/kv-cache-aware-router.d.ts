import type { HashAlgo, KvEvent } from '../../core/wire/kv-event.js';
import { BlockKeySet } from '../block-key-set.js';
import { type RouteDecision, type RouteRequest, type Router, type RouterServerState, type RouterSettings } from './router.js';
export interface KvCacheAwareOptions {
    readonly tokensPerBlock: number;
    readonly maxBatchSize: number;
    readonly backfillBlockHashesOnFinish: boolean;
    /** false = the older finish_request without a session: never polls */
    readonly pollOnFinish: boolean;
}
export interface KvCacheAwareDeps {
    /** hash algo per server, from /server_info (default v1_block_key) */
    readonly hashAlgo: (server: string) => HashAlgo;
    /** POST {server}/kv_cache_events; throws on failure */
    readonly pollEvents: (server: string) => KvEvent[];
    /** the orchestrator's WARNING "Failed to poll KV cache events from {server}: {e}" */
    readonly onPollFailure?: (server: string, message: string) => void;
    /** what the router received from a poll */
    readonly onPolled?: (server: string, events: readonly KvEvent[]) => void;
}
export declare class KvCacheAwareRouter implements Router {
    #private;
    readonly settings: RouterSettings;
    readonly servers: readonly string[];
    constructor(servers: readonly string[], options: KvCacheAwareOptions, deps: KvCacheAwareDeps);
    /** the router's block-hash set of a server (read-only view for tests and the debug endpoint) */
    table(server: string): BlockKeySet;
    route(request: RouteRequest): RouteDecision;
    finish(server: string, request: RouteRequest, success: boolean): void;
    /** poll_and_update for one server */
    poll(server: string): void;
    state(): RouterServerState[];
}
/** How the router applies one event to a server's set: stored adds, removed deletes (whatever the rank). */
export declare function applyRouterEvent(blocks: BlockKeySet, event: KvEvent): void;
