// The per-server block tables both KvCacheAwareRouter versions keep (docs/trtllm-wire.md §1.4, §5): a set of block
// hashes per server filled from its polled KV events, plus the router's own hashes of a routed request, added when
// it finishes successfully (backfill in the 2026-06 router, routed-block tracking in the newest).
import { KvsentinelError } from '../../core/errors.js';
import { blockKey64 } from '../../core/hashing/index.js';
import type { HashAlgo, KvEvent } from '../../core/wire/kv-event.js';
import { BlockKeySet } from '../block-key-set.js';
import type { PromptBlocks } from '../prompt.js';
import type { ActiveCounts } from './active-counts.js';
import type { RouterServerState } from './router.js';

export interface RouterTableDeps {
  /** hash algo per server, from /server_info (default v1_block_key) */
  readonly hashAlgo: (server: string) => HashAlgo;
  /** POST {server}/kv_cache_events; throws on failure */
  readonly pollEvents: (server: string) => readonly KvEvent[];
  /** the orchestrator's WARNING "Failed to poll KV cache events from {server}: {e}" */
  readonly onPollFailure?: (server: string, message: string) => void;
  /** what the router received from a poll */
  readonly onPolled?: (server: string, events: readonly KvEvent[]) => void;
}

export interface ServerTable {
  readonly blocks: BlockKeySet;
  /** only the blocks that came from events (the newest router's EVENT_MATCH_DIAG event_match); null when not kept */
  readonly eventBlocks: BlockKeySet | null;
  readonly algo: HashAlgo;
  polls: number;
  pollFailures: number;
}

export class RouterServerTables {
  readonly #deps: RouterTableDeps;
  readonly #tables = new Map<string, ServerTable>();
  /** router hashes of in-flight requests, added to the chosen server's table on a successful finish */
  readonly #routed = new Map<string, PromptBlocks>();

  constructor(servers: readonly string[], deps: RouterTableDeps, options: { readonly keepEventBlocks: boolean }) {
    this.#deps = deps;
    for (const server of servers) {
      this.#tables.set(server, {
        blocks: new BlockKeySet(),
        eventBlocks: options.keepEventBlocks ? new BlockKeySet() : null,
        algo: deps.hashAlgo(server),
        polls: 0,
        pollFailures: 0,
      });
    }
  }

  /** the table of a configured server */
  of(server: string): ServerTable {
    const table = this.#tables.get(server);
    if (table === undefined) throw new KvsentinelError('internal', `router has no table for server ${server}`);
    return table;
  }

  /** remember the hashes a request was routed with, for when it finishes */
  remember(requestId: string, blocks: PromptBlocks): void {
    this.#routed.set(requestId, blocks);
  }

  /** a request finished: a successful one adds the hashes it was routed with to its server's table */
  settle(server: string, requestId: string, success: boolean): void {
    const table = this.#tables.get(server);
    const routed = this.#routed.get(requestId);
    if (routed === undefined) return;
    this.#routed.delete(requestId);
    if (table === undefined || !success) return;
    for (let i = 0; i < routed.keys.length; i++) table.blocks.add(routed.keys[i]!, routed.fps[i]);
  }

  /** poll_and_update for one server */
  poll(server: string): void {
    const table = this.#tables.get(server);
    if (table === undefined) return;
    table.polls++;
    let events: readonly KvEvent[];
    try {
      events = this.#deps.pollEvents(server);
    } catch (err) {
      table.pollFailures++;
      this.#deps.onPollFailure?.(server, err instanceof Error ? err.message : String(err));
      return;
    }
    this.#deps.onPolled?.(server, events);
    for (const event of events) {
      applyRouterEvent(table.blocks, event);
      if (table.eventBlocks !== null) applyRouterEvent(table.eventBlocks, event);
    }
  }

  state(servers: readonly string[], active: ActiveCounts): RouterServerState[] {
    return servers.map((server) => {
      const table = this.of(server);
      return {
        server,
        activeRequests: active.get(server),
        hashAlgo: table.algo,
        blockTableSize: table.blocks.size,
        polls: table.polls,
        pollFailures: table.pollFailures,
      };
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
