// A source that reads something on an interval: runs never overlap (a tick during a run is skipped), never reject
// (failures are reported to the status board by the read itself), and stop() waits for the run in flight. A read
// that says it failed is retried after `retryMs` when that is sooner than the next tick: a slow interval (the
// workers' /server_info every 30 s) must not leave an unreachable source unreported for a whole one-shot audit.
import { CoalescingRunner } from './coalescing-runner.js';
import type { RunningSource } from './ports.js';

/** what a read may return: 'failed' asks for the retry */
export type PollResult = void | 'failed';

export interface PollingOptions {
  /** after a failed read, read again this soon (when shorter than the interval) */
  readonly retryMs?: number;
}

export class PollingSource implements RunningSource {
  readonly name: string;
  readonly #intervalMs: number;
  readonly #retryMs: number | null;
  readonly #read: (signal: AbortSignal) => Promise<PollResult>;
  readonly #runner: CoalescingRunner;
  readonly #stop = new AbortController();
  #timer: NodeJS.Timeout | undefined;
  #retry: NodeJS.Timeout | undefined;

  constructor(
    name: string,
    intervalMs: number,
    read: (signal: AbortSignal) => Promise<PollResult>,
    options: PollingOptions = {},
  ) {
    this.name = name;
    this.#intervalMs = intervalMs;
    this.#retryMs = options.retryMs !== undefined && options.retryMs < intervalMs ? options.retryMs : null;
    this.#read = read;
    this.#runner = new CoalescingRunner(async () => {
      if (this.#stop.signal.aborted) return;
      const result = await this.#read(this.#stop.signal);
      if (result === 'failed') this.#scheduleRetry();
    });
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
    clearTimeout(this.#retry);
    this.#stop.abort();
    await this.#runner.idle();
  }

  #scheduleRetry(): void {
    if (this.#retryMs === null || this.#retry !== undefined || this.#stop.signal.aborted) return;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      void this.#runner.tick();
    }, this.#retryMs);
    this.#retry.unref();
  }
}
