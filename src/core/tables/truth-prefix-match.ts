// Prefix matching over worker truth: how many leading block keys a server holds, per rank (the oracle for attention
// DP: a request runs on one rank and reuses only that rank's blocks) and across ranks (the union).
import { U64_HI_OFFSET, U64_LO_OFFSET } from './u64-hash-set.js';
import type { HashAlgo } from '../wire/kv-event.js';
import type { TruthStream } from './truth-stream.js';

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

export interface RankGroups {
  readonly ranks: readonly number[];
  /** streams of ranks[i] */
  readonly streams: readonly (readonly TruthStream[])[];
}

/** The streams that pass `options`, grouped by rank, ranks ascending. */
export function groupByRank(streams: Iterable<TruthStream>, options: TruthMatchOptions): RankGroups {
  const byRank = new Map<number, TruthStream[]>();
  for (const stream of streams) {
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

export interface BestPrefix {
  readonly bestRank: number | null;
  readonly bestRankBlocks: number;
  readonly unionBlocks: number;
}

export function matchGroups(
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
    for (let g = 0; !held && g < groups.streams.length; g++)
      held = rankHolds(groups.streams[g]!, halves, unionBlocks, maxLevel, requireAll);
    if (!held) break;
  }
  return { bestRank, bestRankBlocks, unionBlocks };
}

function rankHolds(
  streams: readonly TruthStream[],
  halves: Uint32Array,
  index: number,
  maxLevel: number,
  requireAll: boolean,
): boolean {
  const hi = halves[2 * index + U64_HI_OFFSET]!;
  const lo = halves[2 * index + U64_LO_OFFSET]!;
  for (const stream of streams) {
    const level = stream.blocks.payloadHalves(hi, lo);
    // a copy-counting stream's hit tier bounds what counts (GPU by default), whatever the caller allows
    const held = level >= 0 && level <= maxLevel && level <= stream.hitLevel;
    if (held && !requireAll) return true;
    if (!held && requireAll) return false;
  }
  return requireAll && streams.length > 0;
}
