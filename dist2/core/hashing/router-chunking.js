import { blockKeyChain, wireHashChain } from './block-key.js';
/** The tokens the router hashes: all but the last prompt token (a view, not a copy, for Uint32Array). */
export function routerHashedTokens(prompt) {
    const length = Math.max(prompt.length - 1, 0);
    if (prompt instanceof Uint32Array)
        return prompt.subarray(0, length);
    return Array.prototype.slice.call(prompt, 0, length);
}
export function routerBlockKeys(prompt, tokensPerBlock, algo, options = {}) {
    return blockKeyChain(routerHashedTokens(prompt), tokensPerBlock, algo, options);
}
export function routerWireHashes(prompt, tokensPerBlock, algo, options = {}) {
    return wireHashChain(routerHashedTokens(prompt), tokensPerBlock, algo, options);
}
//# sourceMappingURL=router-chunking.js.map