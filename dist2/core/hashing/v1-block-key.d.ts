import { type U64Scratch } from './u64.js';
export interface V1HashOptions {
    /** cache-salt id (u64); mixed into the first block of a chain only */
    readonly saltId?: bigint | null;
    /** LoRA id (u64); mixed after the tokens of every block */
    readonly loraId?: bigint | null;
}
/**
 * Hashes tokens[start, end) chained to the parent (hi:lo) and writes the result into `out` ([hi, lo]).
 * Salt is applied only when the parent is 0, as TensorRT-LLM does.
 */
export declare function hashV1Into(tokens: ArrayLike<number>, start: number, end: number, parentHi: number, parentLo: number, saltId: bigint | null, loraId: bigint | null, out: U64Scratch): void;
/** v1_block_key of one block of tokens chained to `parent` (0n for the first block). */
export declare function hashV1Block(tokens: ArrayLike<number>, parent?: bigint, options?: V1HashOptions): bigint;
/**
 * Chains tokens in blocks of `blockSize` (last block may be partial) starting from `parent`.
 * Returns one u64 per block, written through a uint32 view so no BigInt is created.
 */
export declare function hashV1Chain(tokens: ArrayLike<number>, blockSize: number, options?: V1HashOptions, parent?: bigint): BigUint64Array;
