import { describe, expect, it } from 'vitest';
import { formatDuration, parseDurationText, parseSizeText, readDuration } from './units.js';

describe('units', () => {
  it.each([
    ['250ms', 250],
    ['5s', 5_000],
    ['1.5m', 90_000],
    ['2h', 7_200_000],
    [' 30s ', 30_000],
    ['0', 0],
  ])('duration %j = %d ms', (text, ms) => expect(parseDurationText(text)).toBe(ms));

  it('refuses a bare number other than 0 (seconds or milliseconds?) and says so', () => {
    expect(readDuration('30')).toEqual({ error: 'no-unit' });
    expect(readDuration('1.5')).toEqual({ error: 'no-unit' });
    expect(readDuration('soon')).toEqual({ error: 'not-a-duration' });
    expect(readDuration('5 s')).toEqual({ error: 'not-a-duration' });
    expect(parseDurationText('-1s')).toBeNull();
  });

  it('reads sizes in bytes with or without a binary unit', () => {
    expect(parseSizeText('1048576')).toBe(1_048_576);
    expect(parseSizeText('16KiB')).toBe(16 * 1024);
    expect(parseSizeText('64MiB')).toBe(64 * 1024 ** 2);
    expect(parseSizeText('1GiB')).toBe(1024 ** 3);
    expect(parseSizeText('1MB')).toBeNull();
    expect(parseSizeText('99999999999GiB')).toBeNull();
  });

  it('formats a duration as the shortest exact text, which reads back to the same value', () => {
    for (const [ms, text] of [
      [0, '0s'],
      [250, '250ms'],
      [1_500, '1500ms'],
      [30_000, '30s'],
      [90_000, '90s'],
      [120_000, '2m'],
      [3_600_000, '1h'],
    ] as const) {
      expect(formatDuration(ms)).toBe(text);
      expect(parseDurationText(text)).toBe(ms);
    }
  });
});
