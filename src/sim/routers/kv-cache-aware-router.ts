// KvCacheAwareRouter (docs/trtllm-wire.md §1.4, §5): per server a set of block hashes (no per-rank ownership, no
// refcount, no expiry) filled from the server's KV events, polled in finish_request; the router hashes the
// prompt itself (tokens_per_block, last token excluded, partial tail, the server's hash algo from /server_info)
// and scores matched/padded − active/max_batch_size; ties go round-robin. backfill_block_hashes_on_finish adds
// the router's own hashes of a finished request to that server's set.
import type { BlockKeySet } from '../block-key-set.js';
import { ActiveCounts } from './active-counts.js';
import { PromptBlocksByAlgo } from './prompt-blocks-by-algo.js';
import type { RouteCandidate, RouteDecision, RouteRequest, Router, RouterSettings } from './router.js';
import { RouterServerTables, type RouterTableDeps } from './router-server-tables.js';

export interface KvCacheAwareOptions {
  readonly tokensPerBlock: number;
  readonly maxBatchSize: number;
  readonly backfillBlockHashesOnFinish: boolean;
  /** false = the older finish_request without a session: never polls */
  readonly pollOnFinish: boolean;
}

export type KvCacheAwareDeps = RouterTableDeps;

export class KvCacheAwareRouter implements Router {
  readonly settings: RouterSettings;
  readonly servers: readonly string[];
  readonly #options: KvCacheAwareOptions;
  readonly #active: ActiveCounts;
  readonly #tables: RouterServerTables;
  #rr = 0;

  constructor(servers: readonly string[], options: KvCacheAwareOptions, deps: KvCacheAwareDeps) {
    this.servers = servers;
    this.#options = options;
    this.settings = {
      type: 'kv_cache_aware',
      profile: '2026-06',
      trackRoutedBlocks: false,
      loadWeight: null,
      tokensPerBlock: options.tokensPerBlock,
      maxBatchSize: options.maxBatchSize,
      backfillBlockHashesOnFinish: options.backfillBlockHashesOnFinish,
      pollOnFinish: options.pollOnFinish,
    };
    this.#active = new ActiveCounts(servers);
    this.#tables = new RouterServerTables(servers, deps, { keepEventBlocks: false });
  }

  /** the router's block-hash set of a server (read-only view for tests and the debug endpoint) */
  table(server: string): BlockKeySet {
    return this.#tables.of(server).blocks;
  }

  route(request: RouteRequest): RouteDecision {
    const tpb = this.#options.tokensPerBlock;
    const byAlgo = new PromptBlocksByAlgo(request.prompt, tpb);
    const candidates: RouteCandidate[] = [];
    let best = Number.NEGATIVE_INFINITY;
    for (const server of this.servers) {
      const table = this.#tables.of(server);
      const blocks = byAlgo.of(table.algo);
      let matchedTokens = 0;
      const keys = blocks.keys;
      for (let i = 0; i < keys.length; i++) {
        if (!table.blocks.has(keys[i]!, blocks.fps[i])) break;
        matchedTokens += tpb;
      }
      const padded = Math.max(blocks.keys.length * tpb, 1);
      const activeRequests = this.#active.get(server);
      const score = matchedTokens / padded - activeRequests / this.#options.maxBatchSize;
      candidates.push({ server, matchedTokens, activeRequests, score });
      if (score > best) best = score;
    }
    const tied = candidates.filter((c) => c.score === best);
    const chosen = tied[this.#rr % tied.length]!;
    if (tied.length > 1) this.#rr++;
    this.#active.increment(chosen.server);
    if (this.#options.backfillBlockHashesOnFinish) {
      this.#tables.remember(request.requestId, byAlgo.of(this.#tables.of(chosen.server).algo));
    }
    return { server: chosen.server, candidates };
  }

  finish(server: string, request: RouteRequest, success: boolean): void {
    this.#active.decrement(server);
    this.#tables.settle(server, request.requestId, success);
    if (this.#options.pollOnFinish) this.poll(server);
  }

  /** poll_and_update for one server */
  poll(server: string): void {
    this.#tables.poll(server);
  }

  state() {
    return this.#tables.state(this.servers, this.#active);
  }
}
