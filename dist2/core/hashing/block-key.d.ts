import type { HashAlgo, WireBlockHash } from '../wire/kv-event.js';
export interface ChainOptions {
    readonly saltId?: bigint | null;
    readonly loraId?: bigint | null;
}
/** The table key of a wire hash: u64 as is; a 64-hex v2_sha256 key → its first 8 bytes big-endian. */
export declare function blockKey64(hash: WireBlockHash): bigint;
/** Chained u64 block keys of `tokens` in blocks of `blockSize` (last block may be partial). */
export declare function blockKeyChain(tokens: ArrayLike<number>, blockSize: number, algo: HashAlgo, options?: ChainOptions): BigUint64Array;
/** Chained block hashes in their wire form (decimal-able bigint, or hex for v2_sha256). */
export declare function wireHashChain(tokens: ArrayLike<number>, blockSize: number, algo: HashAlgo, options?: ChainOptions): WireBlockHash[];
/** Wire hashes of explicit blocks (each its own length), each chained to the previous one. */
export declare function wireHashBlocks(blocks: readonly ArrayLike<number>[], algo: HashAlgo, options?: ChainOptions): WireBlockHash[];
/** Prints a wire hash as TensorRT-LLM writes it: unsigned decimal, or lowercase hex for v2_sha256. */
export declare function formatWireHash(hash: WireBlockHash): string;
