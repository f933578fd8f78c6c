// Durations and sizes as people write them, one grammar for the serve config, the CLI flags and the simulator's
// --set (docs/units.md). A duration text needs its unit (250ms, 5s, 1.5m, 1h): "30" could be seconds or
// milliseconds, so it is refused, except 0, which is the same in every unit. The one bare number that means
// something is a YAML/JSON number in the serve config file: milliseconds, as that file has always read it.
// A size is bytes, with or without a binary unit (1048576, 64MiB).

export const DURATION_UNITS_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 } as const;
export const SIZE_UNITS_BYTES = { B: 1, KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3 } as const;

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/;
const BARE_NUMBER = /^\d+(?:\.\d+)?$/;
const SIZE = /^(\d+)(B|KiB|MiB|GiB)?$/;

export type DurationReading = { readonly ms: number } | { readonly error: 'no-unit' | 'not-a-duration' };

/** "250ms", "5s", "1.5m", "1h", or "0" → milliseconds; a bare number other than 0 has no unit. */
export function readDuration(text: string): DurationReading {
  const t = text.trim();
  const m = DURATION.exec(t);
  if (m !== null) return { ms: Number(m[1]) * DURATION_UNITS_MS[m[2] as keyof typeof DURATION_UNITS_MS] };
  if (BARE_NUMBER.test(t)) return Number(t) === 0 ? { ms: 0 } : { error: 'no-unit' };
  return { error: 'not-a-duration' };
}

/** The duration in milliseconds, or null when the text is not one (see readDuration for why). */
export function parseDurationText(text: string): number | null {
  const r = readDuration(text);
  return 'ms' in r ? r.ms : null;
}

/** "1048576", "16KiB", "64MiB", "1GiB" → bytes; null when not a size or past the safe integers. */
export function parseSizeText(text: string): number | null {
  const m = SIZE.exec(text.trim());
  if (m === null) return null;
  const n = Number(m[1]) * SIZE_UNITS_BYTES[(m[2] ?? 'B') as keyof typeof SIZE_UNITS_BYTES];
  return Number.isSafeInteger(n) ? n : null;
}

/** The shortest exact text of a duration (90000 → "90s", 1500 → "1500ms"), as help texts and `sim keys` show it. */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  if (ms % DURATION_UNITS_MS.h === 0) return `${ms / DURATION_UNITS_MS.h}h`;
  if (ms % DURATION_UNITS_MS.m === 0) return `${ms / DURATION_UNITS_MS.m}m`;
  if (ms % DURATION_UNITS_MS.s === 0) return `${ms / DURATION_UNITS_MS.s}s`;
  return `${ms}ms`;
}
