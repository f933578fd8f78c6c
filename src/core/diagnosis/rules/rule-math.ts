// Small numeric helpers the rules share (ratios that never divide by zero, rounding for evidence, sizing fixes).
import type { RuleHit } from '../rule.js';

export function ratio(part: number, whole: number): number {
  return whole > 0 ? part / whole : 0;
}

/** Rounds for evidence tables: 3 decimals for ratios, integers stay integers. */
export function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}

export function nextPowerOfTwo(value: number): number {
  let n = 1;
  while (n < value) n *= 2;
  return n;
}

export function roundUpTo(value: number, step: number): number {
  return Math.max(step, Math.ceil(value / step) * step);
}

/** Seconds covered by the evaluation window (at least 1, so rates stay finite). */
export function windowSeconds(window: { readonly from: number; readonly to: number } | null): number {
  if (window === null) return 1;
  return Math.max(1, (window.to - window.from) / 1000);
}

export function windowEvidence(window: { readonly from: number; readonly to: number } | null): Record<string, number> {
  return window === null ? {} : { window_from_ms: Math.round(window.from), window_to_ms: Math.round(window.to) };
}

export function percent(value: number): string {
  return `${(value * 100).toFixed(1)}%`;
}

/** The evidence of several partial hits of one rule, in one record. */
export function mergeEvidence(hits: readonly RuleHit[]): Record<string, number | string | boolean> {
  const out: Record<string, number | string | boolean> = {};
  for (const h of hits) Object.assign(out, h.evidence);
  return out;
}
