import { hashV1Block, hashV1Chain } from './v1-block-key.js';
import { keyToHex, truncateKeyToU64, v2BlockKey, v2Chain, v2RootKey } from './v2-sha256.js';
/** The table key of a wire hash: u64 as is; a 64-hex v2_sha256 key → its first 8 bytes big-endian. */
export function blockKey64(hash) {
    return typeof hash === 'bigint' ? hash : BigInt(`0x${hash.slice(0, 16)}`);
}
/** Chained u64 block keys of `tokens` in blocks of `blockSize` (last block may be partial). */
export function blockKeyChain(tokens, blockSize, algo, options = {}) {
    if (algo === 'v1_block_key')
        return hashV1Chain(tokens, blockSize, options);
    const keys = v2Chain(tokens, blockSize, options);
    return BigUint64Array.from(keys, truncateKeyToU64);
}
/** Chained block hashes in their wire form (decimal-able bigint, or hex for v2_sha256). */
export function wireHashChain(tokens, blockSize, algo, options = {}) {
    if (algo === 'v1_block_key')
        return Array.from(hashV1Chain(tokens, blockSize, options));
    const keys = v2Chain(tokens, blockSize, options);
    return algo === 'v2_sha256' ? keys.map(keyToHex) : keys.map(truncateKeyToU64);
}
/** Wire hashes of explicit blocks (each its own length), each chained to the previous one. */
export function wireHashBlocks(blocks, algo, options = {}) {
    const hashes = [];
    if (algo === 'v1_block_key') {
        let parent = 0n;
        for (const block of blocks) {
            parent = hashV1Block(block, parent, options);
            hashes.push(parent);
        }
        return hashes;
    }
    let parentKey = v2RootKey(options);
    for (const block of blocks) {
        parentKey = v2BlockKey(parentKey, block);
        hashes.push(algo === 'v2_sha256' ? keyToHex(parentKey) : truncateKeyToU64(parentKey));
    }
    return hashes;
}
/** Prints a wire hash as TensorRT-LLM writes it: unsigned decimal, or lowercase hex for v2_sha256. */
export function formatWireHash(hash) {
    return typeof hash === 'bigint' ? hash.toString(10) : hash;
}
//# sourceMappingURL=block-key.js.map