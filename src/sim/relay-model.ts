// kvsentinel in relay mode, as the virtual-time driver models it: the sole consumer of one CTX worker's
// /kv_cache_events; it re-serves everything it drained to each consumer exactly once (per-consumer cursor,
// bounded backlog with drop-oldest) and reports what it drained and what each consumer received.
import type { Observation } from '../core/observe/observation.js';
import type { KvEvent } from '../core/wire/kv-event.js';
import type { CtxWorker } from './ctx-worker.js';
import type { Scheduler } from './scheduler.js';

export class RelayModel {
  readonly server: string;
  readonly #worker: CtxWorker;
  readonly #scheduler: Scheduler;
  readonly #emit: (observation: Observation) => void;
  readonly #maxBacklog: number;
  /** relay seq of #buffer[0] */
  #base = 0;
  #buffer: KvEvent[] = [];
  readonly #cursors = new Map<string, number>();

  constructor(worker: CtxWorker, scheduler: Scheduler, emit: (observation: Observation) => void, maxBacklog = 200_000) {
    this.server = worker.id;
    this.#worker = worker;
    this.#scheduler = scheduler;
    this.#emit = emit;
    this.#maxBacklog = maxBacklog;
  }

  /** next relay sequence number */
  get seq(): number {
    return this.#base + this.#buffer.length;
  }

  /** drains the worker (throws while it is down) and records what arrived */
  pull(): void {
    const events = this.#worker.drainEvents();
    if (events.length === 0) return;
    const firstSeq = this.seq;
    this.#buffer.push(...events);
    this.#emit({ kind: 'worker-events', ts: this.#scheduler.now(), server: this.server, firstSeq, events });
    this.#trim();
  }

  /** a consumer's POST /kv_cache_events on the relay port */
  serve(consumer: string): KvEvent[] {
    this.pull();
    let cursor = this.#cursors.get(consumer) ?? 0;
    let dropped = 0;
    if (cursor < this.#base) {
      dropped = this.#base - cursor;
      cursor = this.#base;
    }
    const events = this.#buffer.slice(cursor - this.#base);
    const toSeq = this.seq;
    this.#cursors.set(consumer, toSeq);
    this.#emit({ kind: 'router-poll', ts: this.#scheduler.now(), server: this.server, consumer, fromSeq: cursor, toSeq, dropped });
    this.#trim();
    return events;
  }

  /** registers a consumer from the current position (it sees everything drained from now on) */
  attach(consumer: string): void {
    if (!this.#cursors.has(consumer)) this.#cursors.set(consumer, this.seq);
  }

  #trim(): void {
    // keep what some consumer has not read yet, at most maxBacklog events
    let keepFrom = this.seq;
    for (const cursor of this.#cursors.values()) keepFrom = Math.min(keepFrom, cursor);
    keepFrom = Math.max(keepFrom, this.seq - this.#maxBacklog);
    if (keepFrom > this.#base) {
      this.#buffer = this.#buffer.slice(keepFrom - this.#base);
      this.#base = keepFrom;
    }
  }
}
