// The daemon's one clock for the rules: evaluates the state every `everyMs` by the daemon's clock, whoever reads it
// and however often (scrapes, the live feed, the landing page and the report only read). A timer ticks a few times
// per interval and evaluates when the clock says one is due: the first tick, `everyMs` after the last, or a clock
// that stepped back.
import type { Clock } from '../../sources/ports.js';

export interface EvaluationTimer {
  stop(): void;
}

/** Ticks per interval: an evaluation is at most a quarter of the interval late. */
const TICKS_PER_INTERVAL = 4;

export function evaluationDue(last: number | null, now: number, everyMs: number): boolean {
  return last === null || now < last || now - last >= everyMs;
}

export function startEvaluationTimer(
  evaluate: (now: number) => void,
  clock: Clock,
  everyMs: number,
  onError: (err: unknown) => void,
): EvaluationTimer {
  let last: number | null = null;
  const tick = (): void => {
    const now = clock();
    if (!evaluationDue(last, now, everyMs)) return;
    last = now;
    try {
      evaluate(now);
    } catch (err) {
      // a rule bug costs this evaluation, never the daemon
      onError(err);
    }
  };
  const timer = setInterval(tick, Math.max(1, everyMs / TICKS_PER_INTERVAL));
  timer.unref();
  tick();
  return { stop: () => clearInterval(timer) };
}
