import type { HashAlgo, KvEvent } from '../wire/kv-event.js';
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
export declare class RouterReplicaTable {
    #private;
    apply(server: string, event: KvEvent): ReplicaApplyResult;
    /**
     * The router's matched_tokens for one prompt: tokensPerBlock × leading keys found in the server's set, stopping
     * at the first miss. `keys` are router block keys (router tokens_per_block, e.g. from `routerBlockKeys`).
     */
    matchedTokens(server: string, keys: BigUint64Array, tokensPerBlock: number, hashAlgo?: HashAlgo): number;
    /** Leading keys found in the server's set for `hashAlgo` (default: the server's algorithm). */
    matchedBlocks(server: string, keys: BigUint64Array, hashAlgo?: HashAlgo): number;
    /** The router's `backfill_block_hashes_on_finish`: inserts its own request hashes, bypassing events. */
    backfill(server: string, keys: BigUint64Array, hashAlgo?: HashAlgo): number;
    has(server: string, key: bigint, hashAlgo?: HashAlgo): boolean;
    /** The algorithm the router uses for the server (last `created`; default v1_block_key). */
    hashAlgoOf(server: string): HashAlgo;
    /** Blocks in the server's set for `hashAlgo` (default: the server's algorithm). */
    blockCount(server: string, hashAlgo?: HashAlgo): number;
    servers(): ReplicaServerStats[];
    get byteLength(): number;
    /** Forgets a server (the router drops it from its table when the server leaves). Returns blocks dropped. */
    clearServer(server: string): number;
}
