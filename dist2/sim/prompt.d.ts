import type { HashAlgo, WireBlockHash } from '../core/wire/kv-event.js';
export interface PromptBlocks {
    readonly blockSize: number;
    readonly algo: HashAlgo;
    /** table keys (u64; a v2_sha256 key is its first 8 bytes big-endian) */
    readonly keys: readonly bigint[];
    /** the hashes as they appear on the wire (bigint, or hex for v2_sha256) */
    readonly wire: readonly WireBlockHash[];
    /** fingerprints of the keys (see block-key-set.ts) */
    readonly fps: readonly number[];
    /** how many of the blocks are full (the rest, at most one, is the partial tail) */
    readonly fullBlocks: number;
    /** first token of each block is blockSize * index; the hashed span is [0, hashedTokens) */
    readonly hashedTokens: number;
}
export interface Prompt {
    /** the prompt token ids as the CTX worker receives them */
    readonly tokens: Uint32Array;
    /** blocks of tokens[0, L-1) in `blockSize`, chained with `algo` (memoised) */
    blocks(blockSize: number, algo: HashAlgo): PromptBlocks;
    /** the same prompt as a router that renders/tokenizes differently sees it (router.token_drift) */
    drifted(): Prompt;
}
/** The token a drifted router sees at position 0 instead of the worker's (a chat-template / BOS difference). */
export declare function driftToken(token: number): number;
/** A prompt hashed from scratch (HTTP requests, tests). */
export declare class StaticPrompt implements Prompt {
    #private;
    readonly tokens: Uint32Array;
    constructor(tokens: Uint32Array);
    blocks(blockSize: number, algo: HashAlgo): PromptBlocks;
    drifted(): Prompt;
}
/** Incrementally hashed full blocks of a growing token sequence. */
export declare class ChainBuilder {
    #private;
    readonly blockSize: number;
    readonly algo: HashAlgo;
    readonly drift: boolean;
    readonly keys: bigint[];
    readonly wire: WireBlockHash[];
    readonly fps: number[];
    constructor(blockSize: number, algo: HashAlgo, drift: boolean);
    /** hashes every full block of tokens[0, upTo) not hashed yet */
    extend(tokens: Uint32Array, upTo: number): void;
    /** blocks of tokens[0, hashedTokens) (full ones from the chain, the partial tail hashed now) */
    blocksOf(tokens: Uint32Array, hashedTokens: number): PromptBlocks;
}
