// "Run for a duration with progress, stop on Ctrl-C": a live audit watches its window, `record` records, the demo
// drives traffic. SIGINT ends the run early; the caller still reports what it saw.

export interface RunForOptions {
  readonly durationMs: number;
  /** called every `progressEveryMs` while the run lasts, with the time left */
  readonly onProgress?: (leftMs: number) => void;
  readonly progressEveryMs?: number;
  /** what ends the run early; default: the process's next SIGINT. Returns how to stop listening. */
  readonly interrupt?: (stop: () => void) => () => void;
  /** what completes the run before the duration is up (not an interruption). Returns how to stop listening. */
  readonly completion?: (complete: () => void) => () => void;
}

export interface RunForResult {
  /** ended by the interrupt, before the duration was up */
  readonly interrupted: boolean;
}

const onSigint = (stop: () => void): (() => void) => {
  process.once('SIGINT', stop);
  return () => process.off('SIGINT', stop);
};

export function runFor(options: RunForOptions): Promise<RunForResult> {
  const started = Date.now();
  return new Promise((resolve) => {
    const tick =
      options.onProgress !== undefined
        ? setInterval(
            () => options.onProgress?.(Math.max(0, options.durationMs - (Date.now() - started))),
            options.progressEveryMs ?? 5_000,
          )
        : undefined;
    let finished = false;
    let unlistenCompletion = (): void => undefined;
    const done = (interrupted: boolean): void => {
      if (finished) return;
      finished = true;
      clearInterval(tick);
      clearTimeout(timer);
      unlisten();
      unlistenCompletion();
      resolve({ interrupted });
    };
    const timer = setTimeout(() => done(false), options.durationMs);
    const unlisten = (options.interrupt ?? onSigint)(() => done(true));
    if (options.completion !== undefined) {
      const unlistenNow = options.completion(() => done(false));
      if (finished) unlistenNow();
      else unlistenCompletion = unlistenNow;
    }
  });
}
