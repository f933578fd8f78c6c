import type { HashAlgo, KvEvent } from '../wire/kv-event.js';
/** Algorithm of events that do not state one: V1 C++ managers always emit v1 keys without the field. */
export declare const DEFAULT_EVENT_HASH_ALGO: HashAlgo;
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
export declare class WorkerTruthTable {
    #private;
    /** Applies one event of `server` to the stream it belongs to. */
    apply(server: string, event: KvEvent): TruthApplyResult;
    /**
     * How many leading `keys` the server holds (keys in the worker's block size and algorithm, e.g. from
     * `blockKeyChain`). See TruthPrefixMatch for best-rank vs union.
     */
    prefixMatch(server: string, keys: BigUint64Array, options?: TruthMatchOptions): TruthPrefixMatch;
    /** Whether `server` (optionally only one rank) holds `key` in any stream. */
    has(server: string, key: bigint, attentionDpRank?: number): boolean;
    /** Sizes and anomaly counters of every stream (of one server, or of all), in stable order. */
    streams(server?: string): TruthStreamStats[];
    /** Blocks held by a server (optionally one rank), summed over its streams. */
    blockCount(server: string, attentionDpRank?: number): number;
    /** Blocks per cache level of one rank, summed over its streams (snapshot RankStats.blocksByLevel). */
    blocksByLevel(server: string, attentionDpRank: number): Record<number, number>;
    /** Ranks of `server` that have a stream, ascending. */
    ranks(server: string): number[];
    /** Bytes held by the block sets (typed arrays only). */
    get byteLength(): number;
    /** Forgets every stream of one rank (worker restart seen as an event_id reset). Returns blocks dropped. */
    clearRank(server: string, attentionDpRank: number): number;
    /** Forgets a server entirely. Returns blocks dropped. */
    clearServer(server: string): number;
}
