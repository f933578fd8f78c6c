// The state's counters, each kept twice over time: over the rules' window (what findings read, so they can turn off
// after a fix) and since start (what the snapshot and the exporter read). With no window both are one.
import type { CounterKey } from './counter-key.js';
import { WindowedCounters } from './windowed-counters.js';

export class StateCounters {
  readonly #sinceStart: WindowedCounters;
  readonly #window: WindowedCounters;

  /** windowMs: the rules' window; null = since start, as the one-shot audit wants */
  constructor(windowMs: number | null) {
    this.#sinceStart = new WindowedCounters({ windowMs: null });
    this.#window = windowMs === null ? this.#sinceStart : new WindowedCounters({ windowMs });
  }

  add(ts: number, key: CounterKey, amount = 1): void {
    this.#sinceStart.add(ts, key, amount);
    if (this.#window !== this.#sinceStart) this.#window.add(ts, key, amount);
  }

  /** Keeps the largest value seen (per time bucket). */
  max(ts: number, key: CounterKey, value: number): void {
    this.#sinceStart.max(ts, key, value);
    if (this.#window !== this.#sinceStart) this.#window.max(ts, key, value);
  }

  /** Sum over the rules' window ending at `now`. */
  windowed(key: CounterKey, now: number): number {
    return this.#window.sum(key, now);
  }

  /** Largest value in the rules' window, null if none. */
  windowedMax(key: CounterKey, now: number): number | null {
    return this.#window.maxOf(key, now);
  }

  /** Sum since start. */
  total(key: CounterKey, now: number): number {
    return this.#sinceStart.sum(key, now);
  }

  /** [from, to] of the data inside the rules' window, null before any. */
  span(now: number): { readonly from: number; readonly to: number } | null {
    return this.#window.span(now);
  }
}
