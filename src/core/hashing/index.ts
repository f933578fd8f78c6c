export { hashV1Block, hashV1Chain, hashV1Into, type V1HashOptions } from './v1-block-key.js';
export { v2RootKey, v2BlockKey, v2Chain, keyToHex, truncateKeyToU64, type V2Scope } from './v2-sha256.js';
export { cacheSaltId } from './cache-salt.js';
export {
  blockKey64,
  blockKeyChain,
  wireHashChain,
  wireHashBlocks,
  formatWireHash,
  type ChainOptions,
} from './block-key.js';
export { routerHashedTokens, routerBlockKeys, routerWireHashes } from './router-chunking.js';
