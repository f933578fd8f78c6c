// KvCacheAwareRouter (docs/trtllm-wire.md §1.4, §5): per server a set of block hashes (no per-rank ownership, no
// refcount, no expiry) filled from the server's KV events, polled in finish_request; the router hashes the
// prompt itself (tokens_per_block, last token excluded, partial tail, the server's hash algo from /server_info)
// and scores matched/padded − active/max_batch_size; ties go round-robin. backfill_block_hashes_on_finish adds
// the router's own hashes of a finished request to that server's set.
import { blockKey64 } from '../../core/hashing/index.js';
import type { HashAlgo, KvEvent } from '../../core/wire/kv-event.js';
import { BlockKeySet } from '../block-key-set.js';
import type { PromptBlocks } from '../prompt.js';
import { ActiveCounts, type RouteCandidate, type RouteDecision, type RouteRequest, type Router, type RouterServerState, type RouterSettings } from './router.js';

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

interface ServerTable {
  readonly blocks: BlockKeySet;
  algo: HashAlgo;
  polls: number;
  pollFailures: number;
}

export class KvCacheAwareRouter implements Router {
  readonly settings: RouterSettings;
  readonly servers: readonly string[];
  readonly #options: KvCacheAwareOptions;
  readonly #deps: KvCacheAwareDeps;
  readonly #active: ActiveCounts;
  readonly #tables = new Map<string, ServerTable>();
  /** router hashes of in-flight requests, for backfill */
  readonly #pending = new Map<string, PromptBlocks>();
  #rr = 0;

  constructor(servers: readonly string[], options: KvCacheAwareOptions, deps: KvCacheAwareDeps) {
    this.servers = servers;
    this.#options = options;
    this.#deps = deps;
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
    for (const server of servers) this.#tables.set(server, { blocks: new BlockKeySet(), algo: deps.hashAlgo(server), polls: 0, pollFailures: 0 });
  }

  /** the router's block-hash set of a server (read-only view for tests and the debug endpoint) */
  table(server: string): BlockKeySet {
    return this.#tables.get(server)!.blocks;
  }

  route(request: RouteRequest): RouteDecision {
    const tpb = this.#options.tokensPerBlock;
    const byAlgo = new Map<HashAlgo, PromptBlocks>();
    const candidates: RouteCandidate[] = [];
    let best = Number.NEGATIVE_INFINITY;
    for (const server of this.servers) {
      const table = this.#tables.get(server)!;
      let blocks = byAlgo.get(table.algo);
      if (blocks === undefined) {
        blocks = request.prompt.blocks(tpb, table.algo);
        byAlgo.set(table.algo, blocks);
      }
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
      this.#pending.set(request.requestId, byAlgo.get(this.#tables.get(chosen.server)!.algo)!);
    }
    return { server: chosen.server, candidates };
  }

  finish(server: string, request: RouteRequest, success: boolean): void {
    this.#active.decrement(server);
    const table = this.#tables.get(server);
    if (table === undefined) return;
    const backfill = this.#pending.get(request.requestId);
    if (backfill !== undefined) {
      this.#pending.delete(request.requestId);
      if (success) for (let i = 0; i < backfill.keys.length; i++) table.blocks.add(backfill.keys[i]!, backfill.fps[i]);
    }
    if (this.#options.pollOnFinish) this.poll(server);
  }

  /** poll_and_update for one server */
  poll(server: string): void {
    const table = this.#tables.get(server);
    if (table === undefined) return;
    table.polls++;
    let events: KvEvent[];
    try {
      events = this.#deps.pollEvents(server);
    } catch (err) {
      table.pollFailures++;
      this.#deps.onPollFailure?.(server, err instanceof Error ? err.message : String(err));
      return;
    }
    this.#deps.onPolled?.(server, events);
    for (const event of events) applyRouterEvent(table.blocks, event);
  }

  state(): RouterServerState[] {
    return this.servers.map((server) => {
      const table = this.#tables.get(server)!;
      return { server, activeRequests: this.#active.get(server), hashAlgo: table.algo, blockTableSize: table.blocks.size, polls: table.polls, pollFailures: table.pollFailures };
    });
  }
}

/** How the router applies one event to a server's set: stored adds, removed deletes (whatever the rank). */
export function applyRouterEvent(blocks: BlockKeySet, event: KvEvent): void {
  const data = event.data;
  switch (data.type) {
    case 'stored':
      for (const block of data.blocks) blocks.add(blockKey64(block.blockHash));
      return;
    case 'removed':
      for (const hash of data.blockHashes) blocks.delete(blockKey64(hash));
      return;
    case 'all_cleared':
      blocks.clear();
      return;
    case 'created':
    case 'updated':
      return;
  }
}
