// How KvCacheAwareRouter hashes a prompt (router_utils `_compute_block_hashes`, docs/trtllm-wire.md §1.4):
// the last prompt token is excluded ("in KvCacheManager the last token is not included"), chunks of
// tokens_per_block, a partial final chunk, each chained to the previous hash.
import type { HashAlgo, WireBlockHash } from '../wire/kv-event.js';
import { blockKeyChain, wireHashChain, type ChainOptions } from './block-key.js';

/** The tokens the router hashes: all but the last prompt token (a view, not a copy, for Uint32Array). */
export function routerHashedTokens(prompt: ArrayLike<number>): ArrayLike<number> {
  const length = Math.max(prompt.length - 1, 0);
  if (prompt instanceof Uint32Array) return prompt.subarray(0, length);
  return Array.prototype.slice.call(prompt, 0, length) as number[];
}

export function routerBlockKeys(
  prompt: ArrayLike<number>,
  tokensPerBlock: number,
  algo: HashAlgo,
  options: ChainOptions = {},
): BigUint64Array {
  return blockKeyChain(routerHashedTokens(prompt), tokensPerBlock, algo, options);
}

export function routerWireHashes(
  prompt: ArrayLike<number>,
  tokensPerBlock: number,
  algo: HashAlgo,
  options: ChainOptions = {},
): WireBlockHash[] {
  return wireHashChain(routerHashedTokens(prompt), tokensPerBlock, algo, options);
}
