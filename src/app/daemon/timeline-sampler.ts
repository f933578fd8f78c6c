// Samples a state's snapshots into a Timeline on a timer (live audits, demo, serve); the timeline bounds itself.
import { sampleOf, Timeline, type TimelineOptions } from '../../core/report/timeline.js';
import type { SentinelSnapshot } from '../../core/state/snapshot.js';

export interface TimelineSampler {
  readonly timeline: Timeline;
  /** takes a last sample now (the report's end) */
  sampleNow(): void;
  stop(): void;
}

/** Ticks every `tickMs`; the timeline decides whether a sample is due (its interval grows as it fills). */
export function startTimelineSampler(
  snapshot: () => SentinelSnapshot,
  clock: () => number,
  options: Partial<TimelineOptions> & { readonly tickMs?: number } = {},
): TimelineSampler {
  const timeline = new Timeline(options);
  const sample = (force: boolean): void => {
    try {
      if (force) timeline.add(sampleOf(snapshot()));
      else timeline.offer(clock(), snapshot);
    } catch {
      // a failed snapshot only costs a sample; whoever reads the state reports the failure
    }
  };
  const timer = setInterval(() => sample(false), options.tickMs ?? 1_000);
  timer.unref();
  return {
    timeline,
    sampleNow: () => sample(true),
    stop: () => clearInterval(timer),
  };
}
