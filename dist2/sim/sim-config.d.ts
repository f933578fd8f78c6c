import { type HashAlgo } from '../core/wire/kv-event.js';
import type { RankAssignment } from './ctx-worker.js';
import { type RouterType } from './routers/router.js';
import type { WorkloadConfig } from './workload.js';
export interface CtxConfig {
    readonly servers: number;
    readonly attentionDp: number;
    readonly tokensPerBlock: number;
    readonly gpuBlocksPerRank: number;
    readonly hostBlocksPerRank: number;
    readonly maxConcurrency: number;
    readonly prefillTokensPerSecond: number;
    readonly overheadMs: number;
    readonly rankAssignment: RankAssignment;
    readonly hashAlgo: HashAlgo;
    readonly eventBufferMaxSize: number;
    readonly kvEventsPush: boolean;
    readonly competingConsumer: boolean;
    readonly competitorPeriodMs: number;
    readonly adpGatherDrop: boolean;
    readonly gatherPeriodMs: number;
    readonly windowSize: number;
    /** ctx0 restarts at this virtual time (ms); null = never */
    readonly restartAtMs: number | null;
    readonly restartDowntimeMs: number;
    /** mean time between stalls of one CTX server (0 = never) */
    readonly stallEveryMs: number;
    /** mean stall duration (exponential) */
    readonly stallMs: number;
}
export interface RouterConfig {
    readonly type: RouterType;
    readonly tokensPerBlock: number;
    readonly maxBatchSize: number;
    readonly backfillBlockHashesOnFinish: boolean;
    readonly pollOnFinish: boolean;
    readonly tokenDrift: boolean;
}
export interface GenConfig {
    readonly overheadMs: number;
    readonly msPerToken: number;
}
export interface SimConfig {
    readonly preset: string;
    readonly workload: WorkloadConfig;
    readonly ctx: CtxConfig;
    readonly router: RouterConfig;
    readonly gen: GenConfig;
}
/**
 * The bug report's deployment (design.md §1): 3 CTX servers with attention-DP 4, c = 384, agentic-coding
 * trajectories (≈ 40k input, ≈ 300 output), worker block size 128, a large host cache, router defaults
 * (tokens_per_block 32, max_batch_size 64), and events off (event_buffer_max_size 0, the strongest candidate).
 * See src/sim/README.md for why these workload numbers are plausible.
 */
export declare const SEED_PRESET: SimConfig;
/** seed with the router's signal alive: events on, router block size = worker block size */
export declare const HEALTHY_PRESET: SimConfig;
export declare const PRESETS: Readonly<Record<string, SimConfig>>;
export declare class SimConfigError extends Error {
    readonly name = "SimConfigError";
}
type Kind = 'int' | 'posint' | 'number' | 'bool' | 'duration' | 'optional-duration' | {
    readonly oneOf: readonly string[];
};
interface Knob {
    readonly kind: Kind;
    readonly section: 'workload' | 'ctx' | 'router' | 'gen';
    readonly field: string;
    readonly fault?: (value: unknown) => boolean;
    readonly help: string;
}
/** every `--set` key; faults say when a value is a fault worth reporting */
export declare const KNOBS: Readonly<Record<string, Knob>>;
/** "30s", "1500ms", "2m", "1h" or a bare number of seconds → milliseconds */
export declare function parseDurationMs(text: string): number | null;
/** applies `key=value` overrides; unknown keys and bad values throw SimConfigError naming the key */
export declare function applyOverrides(base: SimConfig, overrides: readonly string[]): SimConfig;
export declare function presetConfig(name: string, overrides?: readonly string[]): SimConfig;
/** the fault knobs in effect, as key=value strings */
export declare function activeFaults(config: SimConfig): string[];
export {};
