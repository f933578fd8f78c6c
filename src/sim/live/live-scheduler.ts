// The model's clock on real time: virtual milliseconds = elapsed wall milliseconds × `speed`. With speed 10 a
// prefill the model times at 10 s takes 1 s of real time, so the seed preset produces meaningful traffic in under a
// minute while every wire exchange stays real. Timers are tracked so `stop()` leaves nothing behind.
import type { Scheduler } from '../scheduler.js';
import { KvsentinelError } from '../../core/errors.js';

export class LiveScheduler implements Scheduler {
  readonly speed: number;
  readonly #start: number;
  readonly #timers = new Set<NodeJS.Timeout>();
  #stopped = false;

  constructor(speed = 1) {
    if (!Number.isFinite(speed) || speed <= 0)
      throw new KvsentinelError('internal', `time scale ${speed}: must be a positive number`);
    this.speed = speed;
    this.#start = performance.now();
  }

  now(): number {
    return (performance.now() - this.#start) * this.speed;
  }

  /** virtual ms → real ms */
  realMs(virtualMs: number): number {
    return virtualMs / this.speed;
  }

  at(timeMs: number, task: () => void): void {
    if (this.#stopped) return;
    const delay = Math.max(0, (timeMs - this.now()) / this.speed);
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      if (!this.#stopped) task();
    }, delay);
    this.#timers.add(timer);
  }

  /** runs `task` every `periodMs` virtual ms until stopped; returns a cancel function */
  every(periodMs: number, task: () => void): () => void {
    let cancelled = false;
    const tick = (): void => {
      if (cancelled) return;
      task();
      this.at(this.now() + periodMs, tick);
    };
    this.at(this.now() + periodMs, tick);
    return () => {
      cancelled = true;
    };
  }

  get pending(): number {
    return this.#timers.size;
  }

  get stopped(): boolean {
    return this.#stopped;
  }

  /** cancels every pending task; later `at` calls are ignored */
  stop(): void {
    this.#stopped = true;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
  }
}
