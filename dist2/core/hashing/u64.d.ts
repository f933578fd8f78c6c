export type U64Scratch = Uint32Array;
export declare function u64ToBigInt(hi: number, lo: number): bigint;
export declare function bigIntHi(value: bigint): number;
export declare function bigIntLo(value: bigint): number;
/** (aHi:aLo) * (bHi:bLo) mod 2^64 → out */
export declare function mul64(aHi: number, aLo: number, bHi: number, bLo: number, out: U64Scratch): void;
/** seed ^ ((add + (seed << 6) + (seed >> 2)) mod 2^64), with add given as halves → out */
export declare function hashCombine(seedHi: number, seedLo: number, addHi: number, addLo: number, out: U64Scratch): void;
