export declare class Rng {
    #private;
    constructor(seed: number, stream?: number);
    nextU32(): number;
    /** uniform in [0, 1) */
    next(): number;
    /** integer uniform in [lo, hi) */
    int(lo: number, hi: number): number;
    /** standard normal (Box–Muller) */
    normal(): number;
    /** log-normal with the given median and log-space sigma */
    logNormal(median: number, sigma: number): number;
    /** exponential with the given mean */
    exponential(mean: number): number;
    /** fills `out` with token ids in [lo, hi) */
    fillTokens(out: Uint32Array, lo: number, hi: number): void;
}
