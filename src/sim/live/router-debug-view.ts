// GET /debug/router of the simulated orchestrator (docs/design.md §8): the router's settings, each server's state
// and the routing decisions after ?since=SEQ, from a bounded history (between `max` and 2 × `max` decisions kept).
import type { RouterDecisionRecord } from '../orchestrator.js';
import type { Router } from '../routers/router.js';

/** a decision as /debug/router lists it: the model orchestrator's record without its prompt (`ts` in epoch seconds) */
export type Decision = Pick<
  RouterDecisionRecord,
  'seq' | 'ts' | 'requestId' | 'correlationId' | 'chosen' | 'candidates'
>;

export class DecisionHistory {
  readonly #max: number;
  #decisions: Decision[] = [];

  constructor(max: number) {
    this.#max = max;
  }

  /** decisions kept now (never more than 2 × max) */
  get size(): number {
    return this.#decisions.length;
  }

  record(decision: Decision): void {
    this.#decisions.push(decision);
    if (this.#decisions.length > this.#max * 2) this.#decisions.splice(0, this.#decisions.length - this.#max);
  }

  /** the /debug/router body (docs/design.md §8): the router's settings and servers, the decisions after `since` */
  debugRouter(router: Router, sinceParam: string | null): string {
    const since = sinceParam !== null && /^\d+$/.test(sinceParam) ? Number(sinceParam) : 0;
    const s = router.settings;
    return JSON.stringify({
      router: {
        type: s.type,
        tokens_per_block: s.tokensPerBlock,
        max_batch_size: s.maxBatchSize,
        backfill_block_hashes_on_finish: s.backfillBlockHashesOnFinish,
      },
      servers: router.state().map((st) => ({
        url: st.server,
        active_requests: st.activeRequests,
        hash_algo: st.hashAlgo,
        block_table_size: st.blockTableSize,
        polls: st.polls,
        poll_failures: st.pollFailures,
      })),
      decisions: this.#decisions
        .filter((d) => d.seq > since)
        .map((d) => ({
          seq: d.seq,
          ts: d.ts,
          request_id: d.requestId,
          correlation_id: d.correlationId,
          chosen: d.chosen,
          candidates:
            d.candidates?.map((c) => ({
              server: c.server,
              matched_tokens: c.matchedTokens,
              active_requests: c.activeRequests,
              score: c.score,
            })) ?? null,
        })),
    });
  }
}
