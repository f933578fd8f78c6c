// Shared by the two calibration test files (split so the six rows run on both cores).
import { expect } from 'vitest';
import { CALIBRATION_ROWS, CALIBRATION_TRAJECTORIES } from '../../src/sim/calibration.js';
import { runVirtual, type SimResult } from '../../src/sim/run-virtual.js';
import { presetConfig } from '../../src/sim/sim-config.js';

export const BAND_POINTS = 2;

export function pct(ratio: number): number {
  return Math.round(ratio * 1000) / 10;
}

/** runs one row of the table at test scale and checks its bands and the workload's shape */
export function runRow(id: string): SimResult {
  const row = CALIBRATION_ROWS.find((r) => r.id === id)!;
  const result = runVirtual(
    presetConfig('seed', [...row.settings, `workload.trajectories=${CALIBRATION_TRAJECTORIES}`]),
  );
  if (row.hit !== null)
    expect(
      Math.abs(pct(result.cache_hit_ratio) - row.hit),
      `${id}: hit ${pct(result.cache_hit_ratio)} vs ${row.hit}`,
    ).toBeLessThanOrEqual(BAND_POINTS);
  if (row.scatter !== null) {
    expect(
      Math.abs(pct(result.turn_scatter_ratio) - row.scatter),
      `${id}: scatter ${pct(result.turn_scatter_ratio)} vs ${row.scatter}`,
    ).toBeLessThanOrEqual(BAND_POINTS);
  }
  // the bug report's workload: average input ≈ 40k tokens, output ≈ 300
  expect(result.mean_input_tokens).toBeGreaterThan(36_000);
  expect(result.mean_input_tokens).toBeLessThan(44_000);
  expect(result.mean_output_tokens).toBeGreaterThan(270);
  expect(result.mean_output_tokens).toBeLessThan(330);
  expect(result.failed_requests).toBe(0);
  return result;
}

export function target(id: string): { hit: number | null; scatter: number | null } {
  const row = CALIBRATION_ROWS.find((r) => r.id === id)!;
  return { hit: row.hit, scatter: row.scatter };
}
