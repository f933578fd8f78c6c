/** Offset of the high half of key i in `u64HalvesView(keys)`: `view[2 * i + U64_HI_OFFSET]`. */
export declare const U64_HI_OFFSET: number;
/** Offset of the low half of key i in `u64HalvesView(keys)`: `view[2 * i + U64_LO_OFFSET]`. */
export declare const U64_LO_OFFSET: number;
/** A Uint32Array view over the same memory as `keys`, for reading keys as halves without allocating BigInts. */
export declare function u64HalvesView(keys: BigUint64Array): Uint32Array;
export declare class U64HashSet {
    #private;
    /** @param expectedSize keys to hold without growing (default: a small table that doubles as needed) */
    constructor(expectedSize?: number);
    get size(): number;
    /** Number of slots (a power of two). */
    get capacity(): number;
    /** Bytes held by the backing typed arrays. */
    get byteLength(): number;
    hasHalves(hi: number, lo: number): boolean;
    /** The key's payload byte, or -1 when the key is absent. */
    payloadHalves(hi: number, lo: number): number;
    /** Sets the payload of a present key; false when the key is absent. */
    setPayloadHalves(hi: number, lo: number, payload: number): boolean;
    /** Adds the key (or overwrites its payload). True when the key was not present before. */
    addHalves(hi: number, lo: number, payload?: number): boolean;
    /** Removes the key; true when it was present. */
    deleteHalves(hi: number, lo: number): boolean;
    has(key: bigint): boolean;
    add(key: bigint, payload?: number): boolean;
    delete(key: bigint): boolean;
    /** The key's payload byte, or -1 when absent. */
    payloadOf(key: bigint): number;
    setPayload(key: bigint, payload: number): boolean;
    /** Empties the set and gives the memory back (capacity returns to the constructor's). */
    clear(): void;
    /** Calls `visit(hi, lo, payload)` for every key, without allocating. Do not mutate the set inside `visit`. */
    forEachHalves(visit: (hi: number, lo: number, payload: number) => void): void;
    /** Keys as bigints, in table order. Do not mutate the set while iterating. */
    keys(): IterableIterator<bigint>;
    [Symbol.iterator](): IterableIterator<bigint>;
}
