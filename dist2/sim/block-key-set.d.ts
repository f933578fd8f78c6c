export declare function fingerprint(key: bigint): number;
/** fingerprint from the key's uint32 halves, without a BigInt */
export declare function fingerprintOf(_hi: number, lo: number): number;
export declare class BlockKeySet {
    #private;
    get size(): number;
    has(key: bigint, fp?: number): boolean;
    add(key: bigint, fp?: number): void;
    delete(key: bigint, fp?: number): boolean;
    clear(): void;
    [Symbol.iterator](): IterableIterator<bigint>;
}
