// The orchestrator's CTX router (tensorrt_llm/serve/router.py): picks a server per request, is told when the
// request finished. Each implementation keeps its own per-server state.
import type { RouterProfile, RouterTypeName } from '../../core/observe/observation.js';
import type { HashAlgo } from '../../core/wire/kv-event.js';
import type { Prompt } from '../prompt.js';

export interface RouteRequest {
  readonly requestId: string;
  readonly correlationId: string | null;
  /** the prompt as the router sees it (router.token_drift: differently tokenized) */
  readonly prompt: Prompt;
  /** the newest router's content-affinity key (route-affinity.ts); absent or null: the request never pins */
  readonly affinityKey?: string | null;
}

export interface RouteCandidate {
  readonly server: string;
  readonly matchedTokens: number;
  readonly activeRequests: number;
  readonly score: number;
}

export interface RouteDecision {
  readonly server: string;
  /** kv_cache_aware: every server's score; other routers: null */
  readonly candidates: readonly RouteCandidate[] | null;
}

export interface RouterServerState {
  readonly server: string;
  readonly activeRequests: number;
  readonly hashAlgo: HashAlgo | null;
  readonly blockTableSize: number | null;
  readonly polls: number;
  readonly pollFailures: number;
}

export interface RouterSettings {
  readonly type: RouterTypeName;
  /** which router.py the simulated orchestrator runs (docs/trtllm-wire.md §5); kv_cache_aware only, null for the others */
  readonly profile?: RouterProfile | null;
  readonly trackRoutedBlocks?: boolean | null;
  readonly loadWeight?: number | null;
  readonly tokensPerBlock: number | null;
  readonly maxBatchSize: number | null;
  readonly backfillBlockHashesOnFinish: boolean | null;
  readonly pollOnFinish: boolean | null;
}

export interface Router {
  readonly settings: RouterSettings;
  readonly servers: readonly string[];
  route(request: RouteRequest): RouteDecision;
  /** finish_request: the CTX response came back (or failed) */
  finish(server: string, request: RouteRequest, success: boolean): void;
  state(): RouterServerState[];
}
