// The router's block table as TensorRT-LLM's KvCacheAwareRouter keeps it (docs/trtllm-wire.md §1.4), replayed from the
// events the router received: ONE set per (server, hash_algo), no per-rank ownership, no refcount, no expiry.
// `stored` adds, `removed` deletes whichever rank sent it (so a removal on rank 1 drops a hash rank 0 still holds),
// `created` only sets the server's algorithm, `updated` is ignored. `all_cleared` is not handled by the router's
// table update as far as its source shows, so it is ignored too (counted in `ignored`). Events of copy-counting
// streams (`residency`: vLLM, SGLang) reach it only for the tiers that count as a hit (GPU unless `hit_tier` says).
import { blockKey64 } from '../hashing/block-key.js';
import type { HashAlgo, KvEvent, KvEventType } from '../wire/kv-event.js';
import { HalvesViews, U64_HI_OFFSET, U64_LO_OFFSET, U64HashSet, u64HalvesView } from './u64-hash-set.js';
import { checkTableBounds, type TableBounds } from './table-bounds.js';
import { DEFAULT_EVENT_HASH_ALGO } from './truth-stream.js';

export interface ReplicaApplyResult {
  readonly added: number;
  readonly removed: number;
  /** true for event types the router does not act on (updated, all_cleared) */
  readonly ignored: boolean;
}

export interface ReplicaServerStats {
  readonly server: string;
  /** the algorithm the router hashes requests with for this server (last `created`, default v1_block_key) */
  readonly hashAlgo: HashAlgo;
  /** blocks per algorithm set */
  readonly blocksPerAlgo: ReadonlyMap<HashAlgo, number>;
  /** `removed` of a hash the set did not hold */
  readonly removedUnknown: number;
  readonly ignoredEvents: number;
}

interface ServerState {
  hashAlgo: HashAlgo;
  readonly sets: Map<HashAlgo, U64HashSet>;
  removedUnknown: number;
  ignoredEvents: number;
}

/** A predicate over key halves: is the key one of `keys`? (the blocks an event or a backfill is adding) */
function sparing(keys: BigUint64Array): (hi: number, lo: number) => boolean {
  const set = new U64HashSet(keys.length);
  const halves = u64HalvesView(keys);
  for (let i = 0; i < keys.length; i++) set.addHalves(halves[2 * i + U64_HI_OFFSET]!, halves[2 * i + U64_LO_OFFSET]!);
  return (hi, lo) => set.hasHalves(hi, lo);
}

export class RouterReplicaTable {
  readonly #servers = new Map<string, ServerState>();
  readonly #max: number;
  /** blocks evicted by the cap, per server */
  readonly #evicted = new Map<string, number>();
  /** the per-decision join asks every server about the same key arrays */
  readonly #views = new HalvesViews();

  /** The router's own table has no cap; this one does (the same as worker truth's), and counts what it evicts. */
  constructor(bounds: Partial<TableBounds> = {}) {
    this.#max = checkTableBounds(bounds).maxBlocksPerServer;
  }

  /** Blocks of `server` evicted because its sets were at maxBlocksPerServer (cumulative). */
  evictedBlocks(server: string): number {
    return this.#evicted.get(server) ?? 0;
  }

  apply(server: string, event: KvEvent): ReplicaApplyResult {
    const state = this.#server(server);
    const algo = event.hashAlgo ?? DEFAULT_EVENT_HASH_ALGO;
    const data = event.data;
    switch (data.type) {
      case 'created':
        state.hashAlgo = algo;
        return { added: 0, removed: 0, ignored: false };
      case 'stored': {
        // a stream router hears every tier; what it scores as a hit is the hit tier's blocks (GPU by default)
        const hit = event.residency?.hitLevel;
        const blocks = hit === undefined ? data.blocks : data.blocks.filter((b) => b.cacheLevel <= hit);
        return {
          added: this.#addCapped(
            server,
            state,
            this.#set(state, algo),
            BigUint64Array.from(blocks, (b) => blockKey64(b.blockHash)),
          ),
          removed: 0,
          ignored: false,
        };
      }
      case 'removed': {
        const hit = event.residency?.hitLevel;
        if (hit !== undefined && (data.cacheLevel ?? 0) > hit) return { added: 0, removed: 0, ignored: false };
        const set = this.#set(state, algo);
        let removed = 0;
        for (const hash of data.blockHashes) {
          if (set.delete(blockKey64(hash))) removed++;
          else state.removedUnknown++;
        }
        return { added: 0, removed, ignored: false };
      }
      case 'updated':
      case 'all_cleared':
        state.ignoredEvents++;
        return { added: 0, removed: 0, ignored: true };
    }
  }

  /**
   * `apply` for an event already reduced to its block keys (stored: the stored blocks' keys, removed: the removed
   * keys; null for other types): the relay buffer's compact form, applied without rebuilding per-block objects.
   */
  applyKeys(
    server: string,
    type: KvEventType,
    hashAlgo: HashAlgo | null,
    keys: BigUint64Array | null,
  ): ReplicaApplyResult {
    const state = this.#server(server);
    const algo = hashAlgo ?? DEFAULT_EVENT_HASH_ALGO;
    switch (type) {
      case 'created':
        state.hashAlgo = algo;
        return { added: 0, removed: 0, ignored: false };
      case 'stored':
        return {
          added: keys === null ? 0 : this.#addCapped(server, state, this.#set(state, algo), keys),
          removed: 0,
          ignored: false,
        };
      case 'removed': {
        const set = this.#set(state, algo);
        const removed = keys === null ? 0 : set.deleteKeys(keys);
        state.removedUnknown += (keys?.length ?? 0) - removed;
        return { added: 0, removed, ignored: false };
      }
      case 'updated':
      case 'all_cleared':
        state.ignoredEvents++;
        return { added: 0, removed: 0, ignored: true };
    }
  }

  /**
   * The router's matched_tokens for one prompt: tokensPerBlock × leading keys found in the server's set, stopping
   * at the first miss. `keys` are router block keys (router tokens_per_block, e.g. from `routerBlockKeys`).
   */
  matchedTokens(server: string, keys: BigUint64Array, tokensPerBlock: number, hashAlgo?: HashAlgo): number {
    return this.matchedBlocks(server, keys, hashAlgo) * tokensPerBlock;
  }

  /** Leading keys found in the server's set for `hashAlgo` (default: the server's algorithm). */
  matchedBlocks(server: string, keys: BigUint64Array, hashAlgo?: HashAlgo): number {
    const state = this.#servers.get(server);
    const set = state?.sets.get(hashAlgo ?? state.hashAlgo);
    if (!set) return 0;
    const halves = this.#views.of(keys);
    let n = 0;
    while (n < keys.length && set.hasHalves(halves[2 * n + U64_HI_OFFSET]!, halves[2 * n + U64_LO_OFFSET]!)) n++;
    return n;
  }

  /** The router's `backfill_block_hashes_on_finish`: inserts its own request hashes, bypassing events. */
  backfill(server: string, keys: BigUint64Array, hashAlgo?: HashAlgo): number {
    const state = this.#server(server);
    return this.#addCapped(server, state, this.#set(state, hashAlgo ?? state.hashAlgo), keys);
  }

  has(server: string, key: bigint, hashAlgo?: HashAlgo): boolean {
    const state = this.#servers.get(server);
    return state?.sets.get(hashAlgo ?? state.hashAlgo)?.has(key) ?? false;
  }

  /** The algorithm the router uses for the server (last `created`; default v1_block_key). */
  hashAlgoOf(server: string): HashAlgo {
    return this.#servers.get(server)?.hashAlgo ?? DEFAULT_EVENT_HASH_ALGO;
  }

  /** Blocks in the server's set for `hashAlgo` (default: the server's algorithm). */
  blockCount(server: string, hashAlgo?: HashAlgo): number {
    const state = this.#servers.get(server);
    return state?.sets.get(hashAlgo ?? state.hashAlgo)?.size ?? 0;
  }

  servers(): ReplicaServerStats[] {
    return [...this.#servers.keys()].sort().map((server) => {
      const state = this.#servers.get(server)!;
      const blocksPerAlgo = new Map<HashAlgo, number>();
      for (const [algo, set] of state.sets) blocksPerAlgo.set(algo, set.size);
      return {
        server,
        hashAlgo: state.hashAlgo,
        blocksPerAlgo,
        removedUnknown: state.removedUnknown,
        ignoredEvents: state.ignoredEvents,
      };
    });
  }

  get byteLength(): number {
    let total = 0;
    for (const state of this.#servers.values()) for (const set of state.sets.values()) total += set.byteLength;
    return total;
  }

  /** Forgets a server (the router drops it from its table when the server leaves). Returns blocks dropped. */
  clearServer(server: string): number {
    let dropped = 0;
    for (const set of this.#servers.get(server)?.sets.values() ?? []) dropped += set.size;
    this.#servers.delete(server);
    this.#evicted.delete(server);
    return dropped;
  }

  #server(server: string): ServerState {
    let state = this.#servers.get(server);
    if (!state) {
      state = { hashAlgo: DEFAULT_EVENT_HASH_ALGO, sets: new Map(), removedUnknown: 0, ignoredEvents: 0 };
      this.#servers.set(server, state);
    }
    return state;
  }

  /** Adds `keys` to `set` within the server's cap (evicting one held block per new one past it); returns blocks added. */
  #addCapped(server: string, state: ServerState, set: U64HashSet, keys: BigUint64Array): number {
    let held = this.#held(state);
    if (held + keys.length <= this.#max) return set.addKeys(keys);
    const spare = sparing(keys);
    const halves = u64HalvesView(keys);
    let added = 0;
    for (let i = 0; i < keys.length; i++) {
      const hi = halves[2 * i + U64_HI_OFFSET]!;
      const lo = halves[2 * i + U64_LO_OFFSET]!;
      if (held >= this.#max && !set.hasHalves(hi, lo)) held -= this.#evictOne(server, state, set, spare);
      if (set.addHalves(hi, lo)) {
        added++;
        held++;
      }
    }
    return added;
  }

  #held(state: ServerState): number {
    let n = 0;
    for (const set of state.sets.values()) n += set.size;
    return n;
  }

  /**
   * Evicts one block from `set` when it holds any, else from the server's largest set, the keys being applied last;
   * returns blocks evicted.
   */
  #evictOne(
    server: string,
    state: ServerState,
    set: U64HashSet,
    spare: ((hi: number, lo: number) => boolean) | null,
  ): number {
    let victim = set;
    if (victim.size === 0) for (const s of state.sets.values()) if (s.size > victim.size) victim = s;
    if (victim.evictOne(spare ?? undefined) < 0) return 0;
    this.#evicted.set(server, this.evictedBlocks(server) + 1);
    return 1;
  }

  #set(state: ServerState, algo: HashAlgo): U64HashSet {
    let set = state.sets.get(algo);
    if (!set) {
      set = new U64HashSet();
      state.sets.set(algo, set);
    }
    return set;
  }
}
