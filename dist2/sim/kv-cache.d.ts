import type { KvEventData } from '../core/wire/kv-event.js';
import type { PromptBlocks } from './prompt.js';
export declare const DEFAULT_PRIORITY = 35;
export interface RankCacheOptions {
    readonly gpuBlocks: number;
    readonly hostBlocks: number;
    /** receives the rank's events in order; null when the worker does not need them (events disabled) */
    readonly emit: ((data: KvEventData) => void) | null;
}
export interface ServeResult {
    /** leading full blocks reused */
    readonly reusedBlocks: number;
    /** blocks newly stored (a stored event lists them) */
    readonly storedBlocks: number;
}
export declare class RankCache {
    #private;
    readonly gpuBlocks: number;
    readonly hostBlocks: number;
    constructor(options: RankCacheOptions);
    get size(): number;
    get gpuSize(): number;
    get hostSize(): number;
    has(key: bigint): boolean;
    levelOf(key: bigint): 0 | 1 | null;
    /** how many leading full blocks of the prompt this rank holds (either tier) */
    matchLinear(blocks: PromptBlocks): number;
    /** how many leading full blocks of the prompt this rank holds (either tier) */
    match(blocks: PromptBlocks): number;
    /** prefill finished: reuse the cached prefix, store the rest (tokens = the prompt's token ids) */
    serve(blocks: PromptBlocks, tokens: Uint32Array): ServeResult;
    /** drops everything (worker restart); no events — the new manager starts from a `created` event */
    clear(): void;
}
