// Runs an async job so that at most one run is in flight and at most one more is queued.
// - tick(): for timers; skips when a run is in flight (never queues behind itself).
// - runFresh(): for callers who need a run that *starts* after their call (a consumer poll needs the events that
//   exist now): joins the queued run or queues one behind the in-flight run. Many callers share one queued run.
// Runs never reject: the job must handle its own errors (failures are reported, not thrown).

export class CoalescingRunner {
  readonly #job: () => Promise<void>;
  #inFlight: Promise<void> | undefined;
  #queued: Promise<void> | undefined;

  constructor(job: () => Promise<void>) {
    this.#job = job;
  }

  get busy(): boolean {
    return this.#inFlight !== undefined;
  }

  tick(): Promise<void> {
    return this.#inFlight ?? this.#start();
  }

  runFresh(): Promise<void> {
    if (this.#inFlight === undefined) return this.#start();
    this.#queued ??= this.#inFlight.then(() => {
      this.#queued = undefined;
      return this.#start();
    });
    return this.#queued;
  }

  /** Resolves when nothing is in flight or queued. */
  async idle(): Promise<void> {
    while (this.#inFlight !== undefined || this.#queued !== undefined) await (this.#queued ?? this.#inFlight);
  }

  #start(): Promise<void> {
    const run = this.#job()
      .catch(() => undefined)
      .finally(() => {
        if (this.#inFlight === run) this.#inFlight = undefined;
      });
    this.#inFlight = run;
    return run;
  }
}
