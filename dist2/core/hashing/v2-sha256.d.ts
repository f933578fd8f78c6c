export interface V2Scope {
    readonly loraId?: bigint | null;
    readonly saltId?: bigint | null;
}
/** Root key of a reuse scope: mask byte (bit0 lora, bit1 salt) then each present field as u64 LE. */
export declare function v2RootKey(scope?: V2Scope): Uint8Array;
/** Key of one block: SHA-256(parent (32 bytes) ‖ tokens[start, end) as uint32 LE). */
export declare function v2BlockKey(parent: Uint8Array, tokens: ArrayLike<number>, start?: number, end?: number): Uint8Array;
/** Chained keys of tokens in blocks of `blockSize` (last block may be partial). */
export declare function v2Chain(tokens: ArrayLike<number>, blockSize: number, scope?: V2Scope): Uint8Array[];
/** `v2_sha256` wire form: lowercase hex of the 32-byte key. */
export declare function keyToHex(key: Uint8Array): string;
/** `v2_sha256_64` wire form: first 8 bytes big-endian, unsigned. */
export declare function truncateKeyToU64(key: Uint8Array): bigint;
