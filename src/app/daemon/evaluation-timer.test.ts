import { afterEach, describe, expect, it, vi } from 'vitest';
import { evaluationDue, startEvaluationTimer } from './evaluation-timer.js';

describe('evaluationDue', () => {
  it('is due first, after the interval, and when the clock stepped back; not before', () => {
    expect(evaluationDue(null, 5, 1_000)).toBe(true);
    expect(evaluationDue(5, 1_004, 1_000)).toBe(false);
    expect(evaluationDue(5, 1_005, 1_000)).toBe(true);
    expect(evaluationDue(5, 4, 1_000)).toBe(true);
  });
});

describe('the evaluation timer', () => {
  afterEach(() => void vi.useRealTimers());

  it("evaluates by the daemon's clock once per interval, at once on start, never while the clock stands still", () => {
    vi.useFakeTimers();
    let now = 10_000;
    const at: number[] = [];
    const timer = startEvaluationTimer(
      (t) => void at.push(t),
      () => now,
      1_000,
      () => undefined,
    );
    expect(at).toEqual([10_000]);
    // the timer ticks, the clock does not move: nothing more is due
    vi.advanceTimersByTime(5_000);
    expect(at).toEqual([10_000]);
    for (let i = 0; i < 8; i++) {
      now += 250;
      vi.advanceTimersByTime(250);
    }
    expect(at).toEqual([10_000, 11_000, 12_000]);
    // a clock stepped back (NTP) evaluates at once rather than waiting for it to catch up
    now = 9_000;
    vi.advanceTimersByTime(250);
    expect(at.at(-1)).toBe(9_000);
    timer.stop();
    now += 10_000;
    vi.advanceTimersByTime(10_000);
    expect(at.at(-1)).toBe(9_000);
  });

  it('a failing evaluation is reported and the next one still runs', () => {
    vi.useFakeTimers();
    let now = 0;
    const errors: unknown[] = [];
    let calls = 0;
    const timer = startEvaluationTimer(
      () => {
        calls++;
        if (calls === 1) throw new Error('rule bug');
      },
      () => now,
      100,
      (err) => void errors.push(err),
    );
    now = 100;
    vi.advanceTimersByTime(100);
    timer.stop();
    expect(calls).toBe(2);
    expect(errors.map(String)).toEqual(['Error: rule bug']);
  });
});
