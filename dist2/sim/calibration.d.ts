export interface CalibrationRow {
    readonly id: string;
    readonly label: string;
    /** --set overrides on the seed preset (only what the row names) */
    readonly settings: readonly string[];
    /** target prefix-cache hit, percent; null = not a table row */
    readonly hit: number | null;
    /** target turn scatter, percent; null = not reported */
    readonly scatter: number | null;
}
export declare const CALIBRATION_ROWS: readonly CalibrationRow[];
/** trajectories per row in the test suite (the preset runs 1536) */
export declare const CALIBRATION_TRAJECTORIES = 512;
