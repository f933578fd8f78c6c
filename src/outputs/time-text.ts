// Times and durations as people read them, one formatter for every output that prints them: the HTML report (file
// and live page, both rendered here on the server), the text report and `kvsentinel tail`. Local time with its UTC
// offset (the zone of the process: TZ), relative times ("3 minutes ago") and durations ("1 min 15 s"), by date-fns.
// one module per function (the package index loads every function date-fns has: the CLI's start-up pays for it)
import { format } from 'date-fns/format';
import { formatDistanceStrict } from 'date-fns/formatDistanceStrict';
import { formatDuration } from 'date-fns/formatDuration';
import { intervalToDuration } from 'date-fns/intervalToDuration';
import { enUS } from 'date-fns/locale/en-US';
import type { Locale } from 'date-fns';

/** "2026-12-02 14:03:12 +01:00": local time with the offset, so it reads the same to someone in another zone */
export function formatDateTime(ms: number): string {
  return format(ms, 'yyyy-MM-dd HH:mm:ss xxx');
}

/** "14:03:12" (a line of a live feed, whose header names the zone); with milliseconds "14:03:12.042" */
export function formatClock(ms: number, options: { readonly milliseconds?: boolean } = {}): string {
  return format(ms, options.milliseconds === true ? 'HH:mm:ss.SSS' : 'HH:mm:ss');
}

/** "+01:00": the zone the clock times are in */
export function formatZone(ms: number): string {
  return `UTC${format(ms, 'xxx')}`;
}

/** "3 minutes ago", "in 5 seconds", "0 seconds ago" */
export function formatRelative(ms: number, now: number): string {
  return formatDistanceStrict(ms, now, { addSuffix: true, roundingMethod: 'floor' });
}

/** "2026-12-02 14:03:12 +01:00 (3 minutes ago)" */
export function formatSince(ms: number, now: number): string {
  return `${formatDateTime(ms)} (${formatRelative(ms, now)})`;
}

/**
 * When a finding first held, for a report read later: relative to the end of the window it was judged over
 * ("… (2 min 21 s before the window's end)"), which stays true whenever the file is opened; without a window end,
 * relative to `now`.
 */
export function formatHeldSince(ms: number, windowEnd: number | null, now: number): string {
  if (windowEnd === null) return formatSince(ms, now);
  if (windowEnd - ms < 1_000) return `${formatDateTime(ms)} (at the window's end)`;
  return `${formatDateTime(ms)} (${formatElapsedShort(windowEnd - ms)} before the window's end)`;
}

const SHORT_UNITS: Record<string, string> = {
  xSeconds: 's',
  xMinutes: 'min',
  xHours: 'h',
  xDays: 'd',
  xMonths: 'mo',
  xYears: 'y',
};

/** date-fns' English with the units shortened (s, min, h): for axes and compact lines */
const SHORT: Locale = {
  ...enUS,
  formatDistance: (token, count) => `${count} ${SHORT_UNITS[token] ?? token}`,
};

function durationOf(ms: number): Duration {
  return intervalToDuration({ start: 0, end: Math.max(0, Math.round(ms / 1000) * 1000) });
}

type Duration = ReturnType<typeof intervalToDuration>;

/** "1 minute 15 seconds", "0 seconds" (whole seconds) */
export function formatElapsed(ms: number): string {
  const text = formatDuration(durationOf(ms));
  return text === '' ? '0 seconds' : text;
}

/** "1 min 15 s", "0 s" (whole seconds): an axis tick, a compact line */
export function formatElapsedShort(ms: number): string {
  const text = formatDuration(durationOf(ms), { locale: SHORT });
  return text === '' ? '0 s' : text;
}
