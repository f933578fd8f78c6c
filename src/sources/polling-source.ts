// A source that reads something on an interval: runs never overlap (a tick during a run is skipped), never reject
// (failures are reported to the status board by the read itself), and stop() waits for the run in flight.
import { CoalescingRunner } from './coalescing-runner.js';
import type { RunningSource } from './ports.js';

export class PollingSource implements RunningSource {
  readonly name: string;
  readonly #intervalMs: number;
  readonly #read: (signal: AbortSignal) => Promise<void>;
  readonly #runner: CoalescingRunner;
  readonly #stop = new AbortController();
  #timer: NodeJS.Timeout | undefined;

  constructor(name: string, intervalMs: number, read: (signal: AbortSignal) => Promise<void>) {
    this.name = name;
    this.#intervalMs = intervalMs;
    this.#read = read;
    this.#runner = new CoalescingRunner(() =>
      this.#stop.signal.aborted ? Promise.resolve() : this.#read(this.#stop.signal),
    );
  }

  start(): Promise<void> {
    if (this.#timer === undefined && !this.#stop.signal.aborted) {
      this.#timer = setInterval(() => void this.#runner.tick(), this.#intervalMs);
      this.#timer.unref();
      void this.#runner.tick();
    }
    return Promise.resolve();
  }

  /** A read that starts now (or right after the one in flight). */
  pollNow(): Promise<void> {
    return this.#runner.runFresh();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#stop.abort();
    await this.#runner.idle();
  }
}
