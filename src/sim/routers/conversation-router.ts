// ConversationRouter (docs/trtllm-wire.md §5): sticky by conversation id (X-Correlation-ID and friends); without an
// id, an implicit prefix match on a router-local block-hash trie (tokens_per_block 128, threshold 0.75);
// otherwise the server with the least content load (prompt tokens in flight). It never reads KV events.
import { ActiveCounts } from './active-counts.js';
import type { RouteDecision, RouteRequest, Router, RouterServerState, RouterSettings } from './router.js';

const TRIE_TOKENS_PER_BLOCK = 128;
const MATCH_THRESHOLD = 0.75;
const MAX_CONVERSATIONS = 100_000;

export class ConversationRouter implements Router {
  readonly settings: RouterSettings = {
    type: 'conversation',
    tokensPerBlock: TRIE_TOKENS_PER_BLOCK,
    maxBatchSize: null,
    backfillBlockHashesOnFinish: null,
    pollOnFinish: null,
  };
  readonly servers: readonly string[];
  readonly #active: ActiveCounts;
  readonly #contentLoad = new Map<string, number>();
  /** conversation id → server (insertion order = LRU order) */
  readonly #sticky = new Map<string, string>();
  /** block key → implicit conversation id */
  readonly #trie = new Map<bigint, string>();
  readonly #inflightTokens = new Map<string, number>();
  #implicit = 0;

  constructor(servers: readonly string[]) {
    this.servers = servers;
    this.#active = new ActiveCounts(servers);
    for (const server of servers) this.#contentLoad.set(server, 0);
  }

  route(request: RouteRequest): RouteDecision {
    let conversation = request.correlationId;
    if (conversation === null) conversation = this.#implicitConversation(request);
    let server = this.#sticky.get(conversation);
    if (server === undefined) {
      server = this.servers[0]!;
      for (const s of this.servers) if (this.#contentLoad.get(s)! < this.#contentLoad.get(server)!) server = s;
    } else {
      this.#sticky.delete(conversation);
    }
    this.#sticky.set(conversation, server);
    if (this.#sticky.size > MAX_CONVERSATIONS) this.#sticky.delete(this.#sticky.keys().next().value!);
    const tokens = request.prompt.tokens.length;
    this.#inflightTokens.set(request.requestId, tokens);
    this.#contentLoad.set(server, this.#contentLoad.get(server)! + tokens);
    this.#active.increment(server);
    return { server, candidates: null };
  }

  finish(server: string, request: RouteRequest): void {
    this.#active.decrement(server);
    const tokens = this.#inflightTokens.get(request.requestId) ?? 0;
    this.#inflightTokens.delete(request.requestId);
    this.#contentLoad.set(server, Math.max((this.#contentLoad.get(server) ?? 0) - tokens, 0));
  }

  state(): RouterServerState[] {
    return this.servers.map((server) => ({
      server,
      activeRequests: this.#active.get(server),
      hashAlgo: null,
      blockTableSize: null,
      polls: 0,
      pollFailures: 0,
    }));
  }

  #implicitConversation(request: RouteRequest): string {
    const blocks = request.prompt.blocks(TRIE_TOKENS_PER_BLOCK, 'v1_block_key');
    let matched = 0;
    let owner: string | null = null;
    for (const key of blocks.keys) {
      const conv = this.#trie.get(key);
      if (conv === undefined) break;
      owner = conv;
      matched++;
    }
    const conversation =
      owner !== null && matched / Math.max(blocks.keys.length, 1) >= MATCH_THRESHOLD
        ? owner
        : `conv_id:${this.#implicit}_${this.#implicit++}`;
    for (const key of blocks.keys) this.#trie.set(key, conversation);
    if (this.#trie.size > MAX_CONVERSATIONS * 16) this.#trie.clear();
    return conversation;
  }
}
