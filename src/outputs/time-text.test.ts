import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  formatClock,
  formatDateTime,
  formatElapsed,
  formatElapsedShort,
  formatRelative,
  formatSince,
  formatZone,
} from './time-text.js';

// 2026-12-02T13:03:12.042Z
const T = Date.UTC(2026, 11, 2, 13, 3, 12, 42);

describe('time as people read it', () => {
  const tz = process.env.TZ;
  beforeEach(() => {
    process.env.TZ = 'Europe/Berlin';
  });
  afterEach(() => {
    if (tz === undefined) delete process.env.TZ;
    else process.env.TZ = tz;
  });

  it('local time with its offset, in the zone of the process', () => {
    expect(formatDateTime(T)).toBe('2026-12-02 14:03:12 +01:00');
    expect(formatClock(T)).toBe('14:03:12');
    expect(formatClock(T, { milliseconds: true })).toBe('14:03:12.042');
    expect(formatZone(T)).toBe('UTC+01:00');
    process.env.TZ = 'America/New_York';
    expect(formatDateTime(T)).toBe('2026-12-02 08:03:12 -05:00');
    process.env.TZ = 'UTC';
    expect(formatDateTime(T)).toBe('2026-12-02 13:03:12 +00:00');
  });

  it('relative times', () => {
    expect(formatRelative(T - 3 * 60_000 - 20_000, T)).toBe('3 minutes ago');
    expect(formatRelative(T - 5_000, T)).toBe('5 seconds ago');
    expect(formatRelative(T, T)).toBe('0 seconds ago');
    expect(formatSince(T - 180_000, T)).toBe('2026-12-02 14:00:12 +01:00 (3 minutes ago)');
  });

  it('durations, long and short', () => {
    expect(formatElapsed(75_000)).toBe('1 minute 15 seconds');
    expect(formatElapsed(0)).toBe('0 seconds');
    expect(formatElapsed(3_600_000 + 1_000)).toBe('1 hour 1 second');
    expect(formatElapsedShort(75_000)).toBe('1 min 15 s');
    expect(formatElapsedShort(30_000)).toBe('30 s');
    expect(formatElapsedShort(0)).toBe('0 s');
    expect(formatElapsedShort(7_200_000)).toBe('2 h');
  });
});
