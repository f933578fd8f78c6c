import { describe, expect, it } from 'vitest';
import { runFor } from './duration-runner.js';

const noInterrupt = (): (() => void) => () => undefined;

describe('runFor', () => {
  it('a completion ends the run before its duration, as a completed run (not an interruption)', async () => {
    let released = false;
    const started = Date.now();
    const result = await runFor({
      durationMs: 60_000,
      interrupt: noInterrupt,
      completion: (complete) => {
        const timer = setTimeout(complete, 20);
        return () => {
          released = true;
          clearTimeout(timer);
        };
      },
    });
    expect(result).toEqual({ interrupted: false });
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(released).toBe(true);
  });

  it('an interrupt still reads as one when a completion is set, and releases the completion', async () => {
    let released = false;
    const result = await runFor({
      durationMs: 60_000,
      interrupt: (stop) => {
        const timer = setTimeout(stop, 10);
        return () => clearTimeout(timer);
      },
      completion: () => () => {
        released = true;
      },
    });
    expect(result).toEqual({ interrupted: true });
    expect(released).toBe(true);
  });

  it('a completion that fires at once ends the run and is released', async () => {
    let released = false;
    const result = await runFor({
      durationMs: 60_000,
      interrupt: noInterrupt,
      completion: (complete) => {
        complete();
        return () => {
          released = true;
        };
      },
    });
    expect(result).toEqual({ interrupted: false });
    expect(released).toBe(true);
  });
});
