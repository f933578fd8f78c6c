export class RelayModel {
    server;
    #worker;
    #scheduler;
    #emit;
    #maxBacklog;
    /** relay seq of #buffer[0] */
    #base = 0;
    #buffer = [];
    #cursors = new Map();
    constructor(worker, scheduler, emit, maxBacklog = 200_000) {
        this.server = worker.id;
        this.#worker = worker;
        this.#scheduler = scheduler;
        this.#emit = emit;
        this.#maxBacklog = maxBacklog;
    }
    /** next relay sequence number */
    get seq() {
        return this.#base + this.#buffer.length;
    }
    /** drains the worker (throws while it is down) and records what arrived */
    pull() {
        const events = this.#worker.drainEvents();
        if (events.length === 0)
            return;
        const firstSeq = this.seq;
        this.#buffer.push(...events);
        this.#emit({ kind: 'worker-events', ts: this.#scheduler.now(), server: this.server, firstSeq, events });
        this.#trim();
    }
    /** a consumer's POST /kv_cache_events on the relay port */
    serve(consumer) {
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
    attach(consumer) {
        if (!this.#cursors.has(consumer))
            this.#cursors.set(consumer, this.seq);
    }
    #trim() {
        // keep what some consumer has not read yet, at most maxBacklog events
        let keepFrom = this.seq;
        for (const cursor of this.#cursors.values())
            keepFrom = Math.min(keepFrom, cursor);
        keepFrom = Math.max(keepFrom, this.seq - this.#maxBacklog);
        if (keepFrom > this.#base) {
            this.#buffer = this.#buffer.slice(keepFrom - this.#base);
            this.#base = keepFrom;
        }
    }
}
//# sourceMappingURL=relay-model.js.map