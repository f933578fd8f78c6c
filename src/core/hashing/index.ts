export { hashV1Block, hashV1Chain, hashV1Into } from './v1-block-key.js';
export { v2RootKey, v2BlockKey, v2Chain, keyToHex, truncateKeyToU64 } from './v2-sha256.js';
export { cacheSaltId } from './cache-salt.js';
export { blockKey64, blockKeyChain, wireHashChain, wireHashBlocks, formatWireHash } from './block-key.js';
export { routerBlockKeys, routerWireHashes } from './router-chunking.js';
