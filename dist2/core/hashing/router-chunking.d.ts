import type { HashAlgo, WireBlockHash } from '../wire/kv-event.js';
import { type ChainOptions } from './block-key.js';
/** The tokens the router hashes: all but the last prompt token (a view, not a copy, for Uint32Array). */
export declare function routerHashedTokens(prompt: ArrayLike<number>): ArrayLike<number>;
export declare function routerBlockKeys(prompt: ArrayLike<number>, tokensPerBlock: number, algo: HashAlgo, options?: ChainOptions): BigUint64Array;
export declare function routerWireHashes(prompt: ArrayLike<number>, tokensPerBlock: number, algo: HashAlgo, options?: ChainOptions): WireBlockHash[];
