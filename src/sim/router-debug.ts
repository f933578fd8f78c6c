// GET /debug/router?since=SEQ (docs/design.md §8): the router state and recent decisions, as the simulated
// orchestrator serves it. Plain JSON-safe values (no block hashes are included).
import type { Orchestrator } from './orchestrator.js';

export interface RouterDebugResponse {
  readonly router: {
    readonly type: string;
    readonly tokens_per_block: number | null;
    readonly max_batch_size: number | null;
    readonly backfill_block_hashes_on_finish: boolean | null;
  };
  readonly servers: readonly {
    readonly url: string;
    readonly active_requests: number;
    readonly hash_algo: string | null;
    readonly block_table_size: number | null;
    readonly polls: number;
    readonly poll_failures: number;
  }[];
  readonly decisions: readonly {
    readonly seq: number;
    readonly ts: number;
    readonly request_id: string;
    readonly correlation_id: string | null;
    readonly chosen: string;
    readonly candidates: readonly {
      readonly server: string;
      readonly matched_tokens: number;
      readonly active_requests: number;
      readonly score: number;
    }[];
  }[];
}

/** `serverUrl` maps a server id to the URL the router uses for it (live driver: host:port) */
export function routerDebugResponse(
  orchestrator: Orchestrator,
  sinceSeq: number,
  serverUrl: (server: string) => string = (s) => s,
): RouterDebugResponse {
  const settings = orchestrator.router.settings;
  return {
    router: {
      type: settings.type,
      tokens_per_block: settings.tokensPerBlock,
      max_batch_size: settings.maxBatchSize,
      backfill_block_hashes_on_finish: settings.backfillBlockHashesOnFinish,
    },
    servers: orchestrator.router.state().map((s) => ({
      url: serverUrl(s.server),
      active_requests: s.activeRequests,
      hash_algo: s.hashAlgo,
      block_table_size: s.blockTableSize,
      polls: s.polls,
      poll_failures: s.pollFailures,
    })),
    decisions: orchestrator.decisionsSince(sinceSeq).map((d) => ({
      seq: d.seq,
      ts: d.ts,
      request_id: d.requestId,
      correlation_id: d.correlationId,
      chosen: serverUrl(d.chosen),
      candidates: (d.candidates ?? []).map((c) => ({
        server: serverUrl(c.server),
        matched_tokens: c.matchedTokens,
        active_requests: c.activeRequests,
        score: c.score,
      })),
    })),
  };
}
