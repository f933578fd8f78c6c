import type { HashAlgo } from '../core/wire/kv-event.js';
import { ChainBuilder, type Prompt } from './prompt.js';
export interface WorkloadConfig {
    readonly seed: number;
    /** trajectories in flight at once (closed loop) */
    readonly concurrency: number;
    /** trajectories in the run */
    readonly trajectories: number;
    readonly systemPrefixTokens: number;
    /** first user message (task + repository context): log-normal */
    readonly taskTokensMedian: number;
    readonly taskTokensSigma: number;
    /** turns per trajectory: uniform in [turnsMin, turnsMax] */
    readonly turnsMin: number;
    readonly turnsMax: number;
    /** model output per turn (tool calls, edits): log-normal */
    readonly outputTokensMedian: number;
    readonly outputTokensSigma: number;
    /** tool result appended after each turn: log-normal, capped */
    readonly toolTokensMedian: number;
    readonly toolTokensSigma: number;
    readonly toolTokensMax: number;
    /** share of tool results that are large dumps (whole files, test logs): a second log-normal */
    readonly toolBigProbability: number;
    readonly toolBigMedian: number;
    readonly toolBigSigma: number;
    /** client-side tool execution time between turns (exponential mean) */
    readonly toolLatencyMs: number;
    /** trajectory slots start uniformly within this window */
    readonly rampMs: number;
    readonly vocabSize: number;
}
export interface TurnPlan {
    readonly outputTokens: number;
    /** tool result appended after this turn (0 after the last) */
    readonly toolTokens: number;
    /** tool execution time before the next turn */
    readonly toolMs: number;
}
/** The shared system prefix: the same token ids in every trajectory of a seed. */
export declare function systemPrefix(config: WorkloadConfig): Uint32Array;
export declare class Trajectory {
    #private;
    readonly index: number;
    readonly correlationId: string;
    readonly turns: readonly TurnPlan[];
    readonly taskTokens: number;
    constructor(config: WorkloadConfig, index: number, prefix: Uint32Array);
    get length(): number;
    /** the prompt of the current turn */
    prompt(): Prompt;
    /** after turn `turn` (0-based): its output and tool result join the context */
    advance(turn: number): void;
    tokens(): Uint32Array;
    chain(blockSize: number, algo: HashAlgo, drift: boolean): ChainBuilder;
}
