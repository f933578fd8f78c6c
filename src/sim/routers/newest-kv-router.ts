// The newest KvCacheAwareRouter (docs/trtllm-wire.md §5), as far as routing and its log lines go: tokens_per_block
// adopted from the first prepared worker when unset (logged), a mismatch that divides skips that server's event
// polling (WARNING) and one that does not divide leaves the server unprepared (never routed to); routed-block
// tracking on by default (the hashes it routed are added on a successful finish); score
// matches/tokens_per_block − load_weight·active among servers under load_cap (active/max_batch_size); round-robin
// counter advanced on every decision. The intermediate router.py build (eventMatchDiag) also logs EVENT_MATCH_DIAG at
// INFO for the first 20 lookups, then every 100th; the newest does not. Log calls keep router.py's own form: the
// adoption and mismatch lines are %-style (format string plus values), the rest f-strings.
// The content-affinity pin (route-affinity.ts) overrides the score for chat requests whose key was routed before.
import type { BlockKeySet } from '../block-key-set.js';
import type { LogCall } from '../log-lines.js';
import { ActiveCounts } from './active-counts.js';
import { PromptBlocksByAlgo } from './prompt-blocks-by-algo.js';
import type {
  RouteCandidate,
  RouteDecision,
  RouteRequest,
  Router,
  RouterServerState,
  RouterSettings,
} from './router.js';
import { RouteAffinity } from './route-affinity.js';
import { RouterServerTables, type RouterTableDeps, type ServerTable } from './router-server-tables.js';

export interface NewestKvRouterOptions {
  /** null = unset: 32 until the first worker's size is adopted */
  readonly tokensPerBlock: number | null;
  readonly maxBatchSize: number;
  readonly trackRoutedBlocks: boolean;
  readonly loadWeight: number;
  /** active/max_batch_size cap; Infinity = none */
  readonly loadCap: number;
  readonly pollOnFinish: boolean;
  /** the pin's LRU bound (router.py ROUTE_AFFINITY_CACHE_SIZE, 50 000) */
  readonly affinityCacheSize?: number;
  /** the intermediate router.py build that logs EVENT_MATCH_DIAG (the newest does not) */
  readonly eventMatchDiag?: boolean;
}

export interface NewestKvRouterDeps extends RouterTableDeps {
  /** the worker's tokens_per_block from /server_info, null when it states none */
  readonly workerTokensPerBlock: (server: string) => number | null;
  readonly log?: (level: 'I' | 'W' | 'E', message: string) => void;
}

const DIAG_FIRST = 20;
const DIAG_EVERY = 100;

export class NewestKvCacheAwareRouter implements Router {
  readonly settings: RouterSettings;
  readonly servers: readonly string[];
  readonly #options: NewestKvRouterOptions;
  readonly #deps: NewestKvRouterDeps;
  readonly #active: ActiveCounts;
  readonly #tables: RouterServerTables;
  /** servers whose events cannot align (tokens_per_block differs but divides): never polled */
  readonly #skipPolling = new Set<string>();
  /** servers whose sizes do not divide: never prepared, never routed to */
  readonly #unprepared = new Set<string>();
  readonly #tpb: number;
  readonly startupLines: LogCall[] = [];
  readonly #affinity: RouteAffinity;
  #rr = 0;
  #diagCalls = 0;

  constructor(servers: readonly string[], options: NewestKvRouterOptions, deps: NewestKvRouterDeps) {
    this.servers = servers;
    this.#options = options;
    this.#deps = deps;
    this.#active = new ActiveCounts(servers);
    this.#tables = new RouterServerTables(servers, deps, { keepEventBlocks: true });
    this.#affinity = new RouteAffinity(options.affinityCacheSize);
    let tpb = options.tokensPerBlock ?? 32;
    let auto = options.tokensPerBlock === null;
    for (const server of servers) {
      const worker = deps.workerTokensPerBlock(server);
      if (worker === null) continue;
      if (auto) {
        if (worker !== tpb)
          this.startupLines.push({
            level: 'I',
            message: "router tokens_per_block unset: adopting worker's %d on %s",
            args: [worker, server],
          });
        tpb = worker;
        auto = false;
      } else if (worker !== tpb) {
        if (Math.max(worker, tpb) % Math.min(worker, tpb) !== 0) {
          this.#unprepared.add(server);
          this.startupLines.push({
            level: 'E',
            message: `RuntimeError: tokens_per_block mismatch on ${server}: router=${tpb} worker=${worker} are not divisible. Align kv_cache_config.tokens_per_block so that one evenly divides the other.`,
          });
        } else {
          this.#skipPolling.add(server);
          this.startupLines.push({
            level: 'W',
            message:
              'tokens_per_block mismatch on %s: router=%d worker=%d. KV events from worker cannot align with router block hashes; skipping event polling and relying on routed-block tracking for hit rate.',
            args: [server, tpb, worker],
          });
        }
      }
    }
    this.#tpb = tpb;
    this.settings = {
      type: 'kv_cache_aware',
      profile: 'newest',
      tokensPerBlock: tpb,
      maxBatchSize: options.maxBatchSize,
      backfillBlockHashesOnFinish: null,
      pollOnFinish: options.pollOnFinish,
      trackRoutedBlocks: options.trackRoutedBlocks,
      loadWeight: options.loadWeight,
    };
  }

  /** the line BlockHashMixin logs at construction */
  static blockHashMixinLine(tokensPerBlock: number | null): string {
    return `BlockHashMixin: tokens_per_block=${tokensPerBlock ?? 32}${tokensPerBlock === null ? ' (auto, adopts worker)' : ''}, custom_tokenizer=None, model_path=None, use_harmony=None`;
  }

  /** how many conversation keys are pinned (bounded by affinityCacheSize) */
  get pinnedConversations(): number {
    return this.#affinity.size;
  }

  table(server: string): BlockKeySet {
    return this.#tables.of(server).blocks;
  }

  route(request: RouteRequest): RouteDecision {
    const tpb = this.#tpb;
    const servers = this.servers.filter((s) => !this.#unprepared.has(s));
    const byAlgo = new PromptBlocksByAlgo(request.prompt, tpb);
    const candidates: RouteCandidate[] = [];
    for (const server of servers) {
      const table = this.#tables.of(server);
      const blocks = byAlgo.of(table.algo);
      let matchedTokens = 0;
      let eventTokens = 0;
      for (let i = 0; i < blocks.keys.length; i++) {
        if (!table.blocks.has(blocks.keys[i]!, blocks.fps[i])) break;
        matchedTokens += tpb;
        if (table.eventBlocks?.has(blocks.keys[i]!, blocks.fps[i])) eventTokens += tpb;
      }
      this.#diag(server, matchedTokens, eventTokens, table);
      const activeRequests = this.#active.get(server);
      candidates.push({
        server,
        matchedTokens,
        activeRequests,
        score: matchedTokens / tpb - this.#options.loadWeight * activeRequests,
      });
    }
    const capped = candidates.filter((c) => c.activeRequests / this.#options.maxBatchSize < this.#options.loadCap);
    const pool = capped.length > 0 ? capped : candidates;
    const key = request.affinityKey ?? null;
    // the pin wins over the scores when its server is still a candidate (routable, under load_cap)
    const pinned = key === null ? undefined : this.#affinity.pinned(key);
    let chosen = pool.find((c) => c.server === pinned);
    if (chosen === undefined) {
      const best = Math.max(...pool.map((c) => c.score));
      const tied = pool.filter((c) => c.score === best);
      chosen = tied[this.#rr % tied.length]!;
    }
    this.#rr++;
    if (key !== null) this.#affinity.pin(key, chosen.server);
    this.#active.increment(chosen.server);
    if (this.#options.trackRoutedBlocks)
      this.#tables.remember(request.requestId, byAlgo.of(this.#tables.of(chosen.server).algo));
    return { server: chosen.server, candidates };
  }

  #diag(server: string, totalMatch: number, eventMatch: number, table: ServerTable): void {
    if (this.#options.eventMatchDiag !== true) return;
    this.#diagCalls++;
    if (this.#diagCalls > DIAG_FIRST && this.#diagCalls % DIAG_EVERY !== 0) return;
    this.#deps.log?.(
      'I',
      `EVENT_MATCH_DIAG server=${server} total_match=${totalMatch} event_match=${eventMatch} event_blocks=${table.eventBlocks?.size ?? 0} total_blocks=${table.blocks.size} query_hashes=[]`,
    );
  }

  finish(server: string, request: RouteRequest, success: boolean): void {
    this.#active.decrement(server);
    this.#tables.settle(server, request.requestId, success);
    if (this.#options.pollOnFinish && !this.#skipPolling.has(server)) this.poll(server);
  }

  /** whether finish_request polls this server (the live orchestrator fetches the events first) */
  polls(server: string): boolean {
    return this.#options.pollOnFinish && !this.#skipPolling.has(server) && !this.#unprepared.has(server);
  }

  poll(server: string): void {
    this.#tables.poll(server);
  }

  state(): RouterServerState[] {
    return this.#tables.state(this.servers, this.#active);
  }
}
