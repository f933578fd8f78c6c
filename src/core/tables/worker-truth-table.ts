// What each worker really holds, rebuilt from its KV events (docs/design.md §4 "worker truth").
// One block set per event stream (server, attention_dp_rank, window_size, hash_algo, layer_group_id): a removal
// only touches the stream that emitted it, unlike the router's table (router-replica-table.ts). Keys are the
// 64-bit block keys of `blockKey64`, in the worker's own block size. Each block remembers its cache level
// (0 = GPU, 1 = host) in the set's payload byte. Streams of engines that store and remove each physical copy per
// medium (events with `residency`: vLLM, SGLang) also count copies per level (truth-copies.ts).
import { blockKey64 } from '../hashing/block-key.js';
import type { KvEvent, WireBlockHash, HashAlgo } from '../wire/kv-event.js';
import { checkTableBounds, type TableBounds } from './table-bounds.js';
import { TierCopies } from './tier-copies.js';
import { applyCopyEvent, blocksPerLevel, clearCopies } from './truth-copies.js';
import {
  groupByRank,
  matchGroups,
  type BestPrefix,
  type RankGroups,
  type TruthMatchOptions,
  type TruthPrefixMatch,
} from './truth-prefix-match.js';
import {
  bumpLevel,
  compareIds,
  DEFAULT_EVENT_HASH_ALGO,
  eventKeys,
  levelOf,
  MAX_LEVEL,
  streamId,
  type TruthStream,
  type TruthStreamStats,
} from './truth-stream.js';
import { HalvesViews, U64HashSet } from './u64-hash-set.js';

export interface TruthApplyResult {
  /** blocks newly added */
  readonly added: number;
  /** blocks deleted (by `removed`) */
  readonly removed: number;
  /** blocks dropped by `all_cleared` */
  readonly cleared: number;
  /** blocks whose cache level changed */
  readonly moved: number;
}

export class WorkerTruthTable {
  readonly #servers = new Map<string, Map<string, TruthStream>>();
  /** unfiltered rank grouping per server for prefixMatch; dropped whenever the server's set of streams changes */
  readonly #groups = new Map<string, RankGroups>();
  /** views of the key arrays the per-decision join asks every server about (the last two) */
  readonly #views = new HalvesViews();
  /** per server, by rank: the stream that rank's last event went to (dropped with the streams it points to) */
  readonly #lastStream = new Map<string, Map<number, TruthStream>>();
  readonly #max: number;
  /** blocks evicted by the cap, per server */
  readonly #evicted = new Map<string, number>();

  constructor(bounds: Partial<TableBounds> = {}) {
    this.#max = checkTableBounds(bounds).maxBlocksPerServer;
  }

  get maxBlocksPerServer(): number {
    return this.#max;
  }

  /** Blocks of `server` evicted because its table was at maxBlocksPerServer (cumulative). */
  evictedBlocks(server: string): number {
    return this.#evicted.get(server) ?? 0;
  }

  /** Applies one event of `server` to the stream it belongs to. */
  apply(server: string, event: KvEvent): TruthApplyResult {
    const rank = event.attentionDpRank ?? 0;
    const data = event.data;
    if (data.type === 'all_cleared') {
      return { added: 0, removed: 0, cleared: this.#clearMatching(server, rank, event), moved: 0 };
    }
    const stream = this.#stream(server, rank, event);
    if (stream.copies !== null)
      return applyCopyEvent(stream, event, {
        held: () => this.blockCount(server),
        max: this.#max,
        evict: (spare) => this.#evictOne(server, stream, spare),
      });
    switch (data.type) {
      case 'created':
        stream.capacityPerLevel = [...data.numBlocksPerCacheLevel];
        return { added: 0, removed: 0, cleared: 0, moved: 0 };
      case 'stored': {
        let added = 0;
        let held = this.blockCount(server);
        /** this event's blocks, spared by evictions (made only once the cap is reached) */
        let fresh: U64HashSet | null = null;
        for (const block of data.blocks) {
          const key = blockKey64(block.blockHash);
          const level = levelOf(block.cacheLevel);
          const previous = stream.blocks.payloadOf(key);
          if (previous < 0 && held >= this.#max) {
            fresh ??= eventKeys(data.blocks);
            if (this.#evictOne(server, stream, fresh)) held--;
          }
          stream.blocks.add(key, level);
          if (previous < 0) {
            added++;
            held++;
          } else {
            stream.storedAgain++;
            bumpLevel(stream, previous, -1);
          }
          bumpLevel(stream, level, 1);
        }
        return { added, removed: 0, cleared: 0, moved: 0 };
      }
      case 'removed': {
        let removed = 0;
        for (const hash of data.blockHashes) {
          if (this.#remove(stream, hash)) removed++;
          else stream.removedUnknown++;
        }
        return { added: 0, removed, cleared: 0, moved: 0 };
      }
      case 'updated': {
        const newLevel = data.cacheLevel?.newValue;
        if (newLevel === null || newLevel === undefined) return { added: 0, removed: 0, cleared: 0, moved: 0 };
        const key = blockKey64(data.blockHash);
        const previous = stream.blocks.payloadOf(key);
        if (previous < 0) {
          stream.updatedUnknown++;
          return { added: 0, removed: 0, cleared: 0, moved: 0 };
        }
        const level = levelOf(newLevel);
        stream.blocks.setPayload(key, level);
        bumpLevel(stream, previous, -1);
        bumpLevel(stream, level, 1);
        return { added: 0, removed: 0, cleared: 0, moved: previous === level ? 0 : 1 };
      }
    }
  }

  /**
   * How many leading `keys` the server holds (keys in the worker's block size and algorithm, e.g. from
   * `blockKeyChain`). See TruthPrefixMatch for best-rank vs union.
   */
  prefixMatch(server: string, keys: BigUint64Array, options: TruthMatchOptions = {}): TruthPrefixMatch {
    const filtered =
      options.attentionDpRank !== undefined ||
      options.windowSize !== undefined ||
      options.hashAlgo !== undefined ||
      options.layerGroupId !== undefined;
    // the unfiltered grouping (every per-decision join asks for it) is cached until the server's streams change
    const groups = filtered
      ? groupByRank(this.#servers.get(server)?.values() ?? [], options)
      : (this.#groups.get(server) ?? this.#cacheGroups(server));
    const perRank = new Map<number, number>();
    const best = matchGroups(
      groups,
      this.#views.of(keys),
      keys.length,
      options.maxCacheLevel ?? MAX_LEVEL,
      options.require === 'all',
      perRank,
    );
    return { bestRank: best.bestRank, bestRankBlocks: best.bestRankBlocks, unionBlocks: best.unionBlocks, perRank };
  }

  /**
   * `prefixMatch` without options and without the per-rank map: what the per-decision join needs (it asks for every
   * server on every decision).
   */
  bestPrefix(server: string, keys: BigUint64Array): BestPrefix {
    const groups = this.#groups.get(server) ?? this.#cacheGroups(server);
    return matchGroups(groups, this.#views.of(keys), keys.length, MAX_LEVEL, false, null);
  }

  #cacheGroups(server: string): RankGroups {
    const groups = groupByRank(this.#servers.get(server)?.values() ?? [], {});
    this.#groups.set(server, groups);
    return groups;
  }

  /** Whether `server` (optionally only one rank) holds `key` in any stream. */
  has(server: string, key: bigint, attentionDpRank?: number): boolean {
    for (const stream of this.#servers.get(server)?.values() ?? []) {
      if (attentionDpRank !== undefined && stream.key.attentionDpRank !== attentionDpRank) continue;
      if (stream.blocks.has(key)) return true;
    }
    return false;
  }

  /** Sizes and anomaly counters of every stream (of one server, or of all), in stable order. */
  streams(server?: string): TruthStreamStats[] {
    const out: TruthStreamStats[] = [];
    const servers = server === undefined ? [...this.#servers.keys()].sort() : [server];
    for (const name of servers) {
      const streams = [...(this.#servers.get(name)?.values() ?? [])];
      streams.sort((a, b) => a.key.attentionDpRank - b.key.attentionDpRank || compareIds(a, b));
      for (const s of streams) {
        out.push({
          ...s.key,
          blocks: s.blocks.size,
          blocksPerLevel: blocksPerLevel(s),
          capacityPerLevel: s.capacityPerLevel,
          storedAgain: s.storedAgain,
          removedUnknown: s.removedUnknown,
          updatedUnknown: s.updatedUnknown,
        });
      }
    }
    return out;
  }

  /** Blocks held by a server (optionally one rank), summed over its streams. */
  blockCount(server: string, attentionDpRank?: number): number {
    let total = 0;
    for (const stream of this.#servers.get(server)?.values() ?? []) {
      if (attentionDpRank === undefined || stream.key.attentionDpRank === attentionDpRank) total += stream.blocks.size;
    }
    return total;
  }

  /** Blocks per cache level of one rank, summed over its streams (snapshot RankStats.blocksByLevel). */
  blocksByLevel(server: string, attentionDpRank: number): Record<number, number> {
    const out: Record<number, number> = {};
    for (const stream of this.#servers.get(server)?.values() ?? []) {
      if (stream.key.attentionDpRank !== attentionDpRank) continue;
      blocksPerLevel(stream).forEach((n, level) => {
        out[level] = (out[level] ?? 0) + n;
      });
    }
    return out;
  }

  /** Ranks of `server` that have a stream, ascending. */
  ranks(server: string): number[] {
    const ranks = new Set<number>();
    for (const stream of this.#servers.get(server)?.values() ?? []) ranks.add(stream.key.attentionDpRank);
    return [...ranks].sort((a, b) => a - b);
  }

  /** Bytes held by the block sets (typed arrays only). */
  get byteLength(): number {
    let total = 0;
    for (const streams of this.#servers.values())
      for (const s of streams.values()) total += s.blocks.byteLength + (s.copies?.byteLength ?? 0);
    return total;
  }

  /** Forgets every stream of one rank (worker restart seen as an event_id reset). Returns blocks dropped. */
  clearRank(server: string, attentionDpRank: number): number {
    const streams = this.#servers.get(server);
    if (!streams) return 0;
    let dropped = 0;
    for (const [id, stream] of streams) {
      if (stream.key.attentionDpRank !== attentionDpRank) continue;
      dropped += stream.blocks.size;
      streams.delete(id);
      this.#groups.delete(server);
      this.#lastStream.delete(server);
    }
    return dropped;
  }

  /** Forgets a server entirely (its eviction count too). Returns blocks dropped. */
  clearServer(server: string): number {
    const dropped = this.blockCount(server);
    this.#servers.delete(server);
    this.#evicted.delete(server);
    this.#groups.delete(server);
    this.#lastStream.delete(server);
    return dropped;
  }

  #stream(server: string, rank: number, event: KvEvent): TruthStream {
    const algo = event.hashAlgo ?? DEFAULT_EVENT_HASH_ALGO;
    // fast path: the stream this rank used last (events of a rank nearly always share window, algo and group),
    // without building the id string
    const last = this.#lastStream.get(server)?.get(rank);
    if (last !== undefined) {
      const k = last.key;
      if (k.windowSize === event.windowSize && k.hashAlgo === algo && k.layerGroupId === event.layerGroupId)
        return last;
    }
    const stream = this.#findStream(server, rank, event, algo);
    let byRank = this.#lastStream.get(server);
    if (byRank === undefined) {
      byRank = new Map();
      this.#lastStream.set(server, byRank);
    }
    byRank.set(rank, stream);
    return stream;
  }

  #findStream(server: string, rank: number, event: KvEvent, algo: HashAlgo): TruthStream {
    let streams = this.#servers.get(server);
    if (!streams) {
      streams = new Map();
      this.#servers.set(server, streams);
    }
    const id = streamId(rank, event.windowSize, algo, event.layerGroupId);
    let stream = streams.get(id);
    if (!stream) {
      stream = {
        key: {
          server,
          attentionDpRank: rank,
          windowSize: event.windowSize,
          hashAlgo: algo,
          layerGroupId: event.layerGroupId,
        },
        blocks: new U64HashSet(),
        copies: event.residency === undefined ? null : new TierCopies(),
        hitLevel: event.residency === undefined ? MAX_LEVEL : levelOf(event.residency.hitLevel),
        blocksPerLevel: [],
        capacityPerLevel: null,
        storedAgain: 0,
        removedUnknown: 0,
        updatedUnknown: 0,
      };
      streams.set(id, stream);
      this.#groups.delete(server);
    }
    return stream;
  }

  /**
   * Makes room for one block: evicts from `stream` when it holds any, else from the server's largest stream; the
   * blocks in `spare` (the event being applied) go last. False when the server holds nothing.
   */
  #evictOne(server: string, stream: TruthStream, spare: U64HashSet): boolean {
    let victim = stream;
    if (victim.blocks.size === 0) {
      for (const s of this.#servers.get(server)?.values() ?? []) if (s.blocks.size > victim.blocks.size) victim = s;
    }
    const copies = victim.copies;
    const level = victim.blocks.evictOne(
      (hi, lo) => spare.hasHalves(hi, lo),
      copies === null ? undefined : (hi, lo) => copies.deleteHalves(hi, lo),
    );
    if (level < 0) return false;
    if (copies === null) bumpLevel(victim, level, -1);
    this.#evicted.set(server, this.evictedBlocks(server) + 1);
    return true;
  }

  #remove(stream: TruthStream, hash: WireBlockHash): boolean {
    const key = blockKey64(hash);
    const level = stream.blocks.payloadOf(key);
    if (level < 0) return false;
    stream.blocks.delete(key);
    bumpLevel(stream, level, -1);
    return true;
  }

  /** all_cleared: empties the rank's streams that match the fields the event states (unstated = all). */
  #clearMatching(server: string, rank: number, event: KvEvent): number {
    let cleared = 0;
    for (const stream of this.#servers.get(server)?.values() ?? []) {
      const k = stream.key;
      if (k.attentionDpRank !== rank) continue;
      if (event.windowSize !== null && k.windowSize !== event.windowSize) continue;
      if (event.hashAlgo !== null && k.hashAlgo !== event.hashAlgo) continue;
      if (event.layerGroupId !== null && k.layerGroupId !== event.layerGroupId) continue;
      if (stream.copies !== null) {
        const level = event.data.type === 'all_cleared' ? (event.data.cacheLevel ?? null) : null;
        cleared += clearCopies(stream, level === null ? null : levelOf(level));
        continue;
      }
      cleared += stream.blocks.size;
      stream.blocks.clear();
      stream.blocksPerLevel = [];
    }
    return cleared;
  }
}
