// Whether a server's pull path still brings its events (event-queue-shared): when a drain last brought events, and
// how many served requests have computed a new block since — each stored blocks whose events the drains never
// brought. The worker-events reducer reports the drains, the outcomes reducer the served requests.
export interface PullEventFreshness {
  /** when the last drain of the pull path brought events (null: never) */
  readonly lastPullEventTs: number | null;
  /** served requests that computed at least one new block since then */
  readonly newBlockOutcomesSincePullEvent: number;
}

const NEVER: PullEventFreshness = { lastPullEventTs: null, newBlockOutcomesSincePullEvent: 0 };

export class PullEventWatch {
  readonly #servers = new Map<string, { lastPullEventTs: number; newBlockOutcomesSincePullEvent: number }>();

  /** A drain of the server's pull path brought events at `ts`. */
  pullEvents(server: string, ts: number): void {
    this.#servers.set(server, { lastPullEventTs: ts, newBlockOutcomesSincePullEvent: 0 });
  }

  /** A served request computed at least one new block (counted once its pull path has brought events). */
  servedNewBlocks(server: string): void {
    const s = this.#servers.get(server);
    if (s !== undefined) s.newBlockOutcomesSincePullEvent++;
  }

  /** Whether the server's pull path ever brought events (only then do new blocks count). */
  watching(server: string): boolean {
    return this.#servers.has(server);
  }

  of(server: string): PullEventFreshness {
    return this.#servers.get(server) ?? NEVER;
  }
}
