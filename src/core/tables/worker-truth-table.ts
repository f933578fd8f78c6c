// What each worker really holds, rebuilt from its KV events (docs/design.md §4 "worker truth").
// One block set per event stream (server, attention_dp_rank, window_size, hash_algo, layer_group_id): a removal
// only touches the stream that emitted it, unlike the router's table (router-replica-table.ts). Keys are the
// 64-bit block keys of `blockKey64`, in the worker's own block size. Each block remembers its cache level
// (0 = GPU, 1 = host) in the set's payload byte.
import { blockKey64 } from '../hashing/block-key.js';
import type { HashAlgo, KvEvent, WireBlockHash } from '../wire/kv-event.js';
import { U64_HI_OFFSET, U64_LO_OFFSET, U64HashSet, u64HalvesView } from './u64-hash-set.js';

/** Algorithm of events that do not state one: V1 C++ managers always emit v1 keys without the field. */
export const DEFAULT_EVENT_HASH_ALGO: HashAlgo = 'v1_block_key';
/** Cache levels above this share one payload value (no build emits more than 0 and 1). */
const MAX_LEVEL = 255;

/**
 * Default cap on the blocks one server's table holds (all ranks and streams together). A real worker holds at most
 * its GPU plus host block pools: tens of thousands of GPU blocks per rank, a few hundred thousand with host
 * offload, so 4 M is far above any server we know and costs at most ~100 MiB (12–24 bytes per block). The table only
 * reaches it when `removed` events were lost (a competing consumer, a backlog overflow).
 */
export const DEFAULT_MAX_TABLE_BLOCKS_PER_SERVER = 4_000_000;

export interface TableBounds {
  /** blocks one server may hold; past it an arbitrary held block is evicted per new one (counted) */
  readonly maxBlocksPerServer: number;
}

export interface TruthStreamKey {
  readonly server: string;
  /** null on the wire (no attention DP) is rank 0 */
  readonly attentionDpRank: number;
  readonly windowSize: number | null;
  /** the event's hash_algo, or DEFAULT_EVENT_HASH_ALGO when it stated none */
  readonly hashAlgo: HashAlgo;
  readonly layerGroupId: number | null;
}

export interface TruthStreamStats extends TruthStreamKey {
  readonly blocks: number;
  /** blocks held per cache level (index = level) */
  readonly blocksPerLevel: readonly number[];
  /** from the last `created` event; null when none was seen */
  readonly capacityPerLevel: readonly number[] | null;
  /** `stored` of a block the stream already held */
  readonly storedAgain: number;
  /** `removed` of a block the stream did not hold (a missed `stored`, or a table built mid-stream) */
  readonly removedUnknown: number;
  /** `updated` cache-level change of a block the stream did not hold */
  readonly updatedUnknown: number;
}

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

export interface TruthMatchOptions {
  /** only this rank (default: every rank of the server) */
  readonly attentionDpRank?: number;
  /** only streams of this window size */
  readonly windowSize?: number;
  /** only streams of this algorithm (the keys must be computed with it anyway) */
  readonly hashAlgo?: HashAlgo;
  readonly layerGroupId?: number;
  /** count a block only at this cache level or below (0 = GPU only); default: any level */
  readonly maxCacheLevel?: number;
  /**
   * When a rank has several selected streams (window sizes, layer groups): 'any' (default) counts a block held if
   * one stream holds it, 'all' only if every stream does (a hybrid model reuses a block only when all groups hold it).
   */
  readonly require?: 'any' | 'all';
}

export interface TruthPrefixMatch {
  /**
   * The rank with the longest match, the oracle for attention DP: a request runs on one rank and can reuse only
   * that rank's blocks. Ties go to the lowest rank. null when the server has no selected stream.
   */
  readonly bestRank: number | null;
  /** consecutive leading keys held by `bestRank` */
  readonly bestRankBlocks: number;
  /**
   * consecutive leading keys each held by at least one rank (not necessarily the same one): what a table without
   * per-rank ownership would see; ≥ bestRankBlocks.
   */
  readonly unionBlocks: number;
  /** leading-match length per rank */
  readonly perRank: ReadonlyMap<number, number>;
}

interface RankGroups {
  readonly ranks: readonly number[];
  /** streams of ranks[i] */
  readonly streams: readonly (readonly Stream[])[];
}

interface Stream {
  readonly key: TruthStreamKey;
  readonly blocks: U64HashSet;
  blocksPerLevel: number[];
  capacityPerLevel: readonly number[] | null;
  storedAgain: number;
  removedUnknown: number;
  updatedUnknown: number;
}

function eventKeys(blocks: readonly { readonly blockHash: WireBlockHash }[]): U64HashSet {
  const set = new U64HashSet(blocks.length);
  for (const b of blocks) set.add(blockKey64(b.blockHash));
  return set;
}

function levelOf(cacheLevel: number): number {
  if (!Number.isInteger(cacheLevel) || cacheLevel < 0) return 0;
  return Math.min(cacheLevel, MAX_LEVEL);
}

function streamId(rank: number, windowSize: number | null, algo: HashAlgo, layerGroupId: number | null): string {
  return `${rank}|${String(windowSize)}|${algo}|${String(layerGroupId)}`;
}

function bumpLevel(stream: Stream, level: number, delta: number): void {
  while (stream.blocksPerLevel.length <= level) stream.blocksPerLevel.push(0);
  stream.blocksPerLevel[level] = (stream.blocksPerLevel[level] ?? 0) + delta;
}

export function checkTableBounds(bounds: Partial<TableBounds>): TableBounds {
  const maxBlocksPerServer = bounds.maxBlocksPerServer ?? DEFAULT_MAX_TABLE_BLOCKS_PER_SERVER;
  if (!Number.isSafeInteger(maxBlocksPerServer) || maxBlocksPerServer < 1) {
    throw new RangeError(`maxBlocksPerServer must be a positive integer, got ${String(maxBlocksPerServer)}`);
  }
  return { maxBlocksPerServer };
}

export class WorkerTruthTable {
  readonly #servers = new Map<string, Map<string, Stream>>();
  /** unfiltered rank grouping per server for prefixMatch; dropped whenever the server's set of streams changes */
  readonly #groups = new Map<string, RankGroups>();
  /** per server, by rank: the stream that rank's last event went to (dropped with the streams it points to) */
  readonly #lastStream = new Map<string, Map<number, Stream>>();
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
      options.attentionDpRank !== undefined || options.windowSize !== undefined || options.hashAlgo !== undefined || options.layerGroupId !== undefined;
    // the unfiltered grouping (every per-decision join asks for it) is cached until the server's streams change
    const groups = filtered ? this.#groupByRank(server, options) : (this.#groups.get(server) ?? this.#cacheGroups(server));
    const perRank = new Map<number, number>();
    const best = matchGroups(groups, u64HalvesView(keys), keys.length, options.maxCacheLevel ?? MAX_LEVEL, options.require === 'all', perRank);
    return { bestRank: best.bestRank, bestRankBlocks: best.bestRankBlocks, unionBlocks: best.unionBlocks, perRank };
  }

  /**
   * `prefixMatch` without options and without the per-rank map: what the per-decision join needs (it asks for every
   * server on every decision).
   */
  bestPrefix(server: string, keys: BigUint64Array): BestPrefix {
    const groups = this.#groups.get(server) ?? this.#cacheGroups(server);
    return matchGroups(groups, u64HalvesView(keys), keys.length, MAX_LEVEL, false, null);
  }

  /** The server's streams that pass `options`, grouped by rank, ranks ascending. */
  #groupByRank(server: string, options: TruthMatchOptions): RankGroups {
    const byRank = new Map<number, Stream[]>();
    for (const stream of this.#servers.get(server)?.values() ?? []) {
      const k = stream.key;
      if (options.attentionDpRank !== undefined && k.attentionDpRank !== options.attentionDpRank) continue;
      if (options.windowSize !== undefined && k.windowSize !== options.windowSize) continue;
      if (options.hashAlgo !== undefined && k.hashAlgo !== options.hashAlgo) continue;
      if (options.layerGroupId !== undefined && k.layerGroupId !== options.layerGroupId) continue;
      const list = byRank.get(k.attentionDpRank);
      if (list) list.push(stream);
      else byRank.set(k.attentionDpRank, [stream]);
    }
    const ranks = [...byRank.keys()].sort((a, b) => a - b);
    return { ranks, streams: ranks.map((r) => byRank.get(r)!) };
  }

  #cacheGroups(server: string): RankGroups {
    const groups = this.#groupByRank(server, {});
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
          blocksPerLevel: [...s.blocksPerLevel],
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
      stream.blocksPerLevel.forEach((n, level) => {
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
    for (const streams of this.#servers.values()) for (const s of streams.values()) total += s.blocks.byteLength;
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

  #stream(server: string, rank: number, event: KvEvent): Stream {
    const algo = event.hashAlgo ?? DEFAULT_EVENT_HASH_ALGO;
    // fast path: the stream this rank used last (events of a rank nearly always share window, algo and group),
    // without building the id string
    const last = this.#lastStream.get(server)?.get(rank);
    if (last !== undefined) {
      const k = last.key;
      if (k.windowSize === event.windowSize && k.hashAlgo === algo && k.layerGroupId === event.layerGroupId) return last;
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

  #findStream(server: string, rank: number, event: KvEvent, algo: HashAlgo): Stream {
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
  #evictOne(server: string, stream: Stream, spare: U64HashSet): boolean {
    let victim = stream;
    if (victim.blocks.size === 0) {
      for (const s of this.#servers.get(server)?.values() ?? []) if (s.blocks.size > victim.blocks.size) victim = s;
    }
    const level = victim.blocks.evictOne((hi, lo) => spare.hasHalves(hi, lo));
    if (level < 0) return false;
    bumpLevel(victim, level, -1);
    this.#evicted.set(server, this.evictedBlocks(server) + 1);
    return true;
  }

  #remove(stream: Stream, hash: WireBlockHash): boolean {
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
      cleared += stream.blocks.size;
      stream.blocks.clear();
      stream.blocksPerLevel = [];
    }
    return cleared;
  }
}

function compareIds(a: Stream, b: Stream): number {
  const x = streamId(a.key.attentionDpRank, a.key.windowSize, a.key.hashAlgo, a.key.layerGroupId);
  const y = streamId(b.key.attentionDpRank, b.key.windowSize, b.key.hashAlgo, b.key.layerGroupId);
  return x < y ? -1 : x > y ? 1 : 0;
}

export interface BestPrefix {
  readonly bestRank: number | null;
  readonly bestRankBlocks: number;
  readonly unionBlocks: number;
}

function matchGroups(
  groups: RankGroups,
  halves: Uint32Array,
  count: number,
  maxLevel: number,
  requireAll: boolean,
  perRank: Map<number, number> | null,
): BestPrefix {
  let bestRank: number | null = null;
  let bestRankBlocks = 0;
  for (let g = 0; g < groups.ranks.length; g++) {
    const rank = groups.ranks[g]!;
    const streams = groups.streams[g]!;
    let n = 0;
    while (n < count && rankHolds(streams, halves, n, maxLevel, requireAll)) n++;
    perRank?.set(rank, n);
    if (bestRank === null || n > bestRankBlocks) {
      bestRank = rank;
      bestRankBlocks = n;
    }
  }
  // A key beyond a rank's own match can still be held by another rank, so the union is walked key by key.
  let unionBlocks = bestRankBlocks;
  for (; unionBlocks < count; unionBlocks++) {
    let held = false;
    for (let g = 0; !held && g < groups.streams.length; g++) held = rankHolds(groups.streams[g]!, halves, unionBlocks, maxLevel, requireAll);
    if (!held) break;
  }
  return { bestRank, bestRankBlocks, unionBlocks };
}

function rankHolds(
  streams: readonly Stream[],
  halves: Uint32Array,
  index: number,
  maxLevel: number,
  requireAll: boolean,
): boolean {
  const hi = halves[2 * index + U64_HI_OFFSET]!;
  const lo = halves[2 * index + U64_LO_OFFSET]!;
  for (const stream of streams) {
    const level = stream.blocks.payloadHalves(hi, lo);
    const held = level >= 0 && level <= maxLevel;
    if (held && !requireAll) return true;
    if (!held && requireAll) return false;
  }
  return requireAll && streams.length > 0;
}
