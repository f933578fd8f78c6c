// The daemon's running sources, keyed by spec: reconcile() stops the ones a configuration no longer asks for and
// starts the new ones (an unchanged spec keeps its running source), and stats() says what the relays and streams
// counted so far (a relay a reload replaced stays in the totals, so exported counters never go back).
import type { SidecarStats } from '../../core/observe/sidecar-stats.js';
import type { Logger } from '../../sources/ports.js';
import type { SourceStatusBoard } from '../../sources/source-status.js';
import { statusNamesOf, type DaemonSource, type RelayEndpoint, type SourceSpec } from './daemon-sources.js';
import { RelayCounterTotals } from './relay-counter-totals.js';

export class DaemonSourceSet {
  readonly #running = new Map<string, DaemonSource>();
  readonly #relayTotals = new RelayCounterTotals();
  readonly #status: SourceStatusBoard;
  readonly #logger: Logger;

  constructor(deps: { readonly status: SourceStatusBoard; readonly logger: Logger }) {
    this.#status = deps.status;
    this.#logger = deps.logger;
  }

  get size(): number {
    return this.#running.size;
  }

  relays(): RelayEndpoint[] {
    return [...this.#running.values()].flatMap((s) => (s.kind === 'relay' ? [s.source] : []));
  }

  /** Stops what `specs` no longer holds, starts what is new; returns why each source that did not start failed. */
  async reconcile(specs: readonly SourceSpec[]): Promise<string[]> {
    const status = this.#status;
    const wanted = new Map(specs.map((s) => [s.key, s]));
    const removed = [...this.#running].filter(([key]) => !wanted.has(key));
    // stop first: a changed relay frees its port before its replacement binds it
    await Promise.all(
      removed.map(async ([key, made]) => {
        this.#running.delete(key);
        const { source } = made;
        status.silence(source.name);
        await source.stop();
        if (made.kind === 'relay') this.#relayTotals.retire(made.source.target.id, made.source.counters());
        status.unregister(source.name);
        if (made.kind === 'stream') for (const name of made.source.sourceNames) status.unregister(name);
      }),
    );
    const failures: string[] = [];
    for (const [key, spec] of wanted) {
      if (this.#running.has(key)) continue;
      const made = spec.make();
      const { source } = made;
      for (const name of statusNamesOf(made)) status.register(name);
      try {
        await source.start();
        this.#running.set(key, made);
        this.#logger.debug?.('source started', { source: source.name });
      } catch (err) {
        const message = `${source.name} did not start: ${err instanceof Error ? err.message : String(err)}`;
        status.fail(source.name, 'other', message);
        failures.push(message);
        status.silence(source.name);
        await source.stop().catch(() => undefined);
      }
    }
    return failures;
  }

  /** Stops every source (relays finish their in-flight requests; pollers stop in parallel). */
  async stopAll(): Promise<void> {
    const running = [...this.#running.values()];
    await Promise.all(running.map((s) => s.source.stop()));
    // their counts stay in the stats observed at stop
    for (const made of running)
      if (made.kind === 'relay') this.#relayTotals.retire(made.source.target.id, made.source.counters());
    this.#running.clear();
  }

  /** What the relays (retired ones included) and the running streams counted so far. */
  stats(): Omit<SidecarStats, 'feed'> {
    const running = [...this.#running.values()];
    return {
      relays: this.#relayTotals.totals(this.relays().map((r) => ({ server: r.target.id, counters: r.counters() }))),
      streams: running.flatMap((s) => (s.kind === 'stream' ? s.source.counters() : [])),
      forwards: running.flatMap((s) => (s.kind === 'stream' ? (s.source.forwardCounters?.() ?? []) : [])),
    };
  }
}
