export class WorkerEventQueue {
    options;
    stats = { emitted: 0, dropped: 0, drained: 0, drains: 0 };
    #nextId;
    /** gathered (ranks ≠ 0) events on their way to rank 0, per rank, in emission order */
    #inFlight;
    #queue = [];
    #head = 0;
    constructor(options) {
        this.options = options;
        this.#nextId = new Array(options.ranks).fill(0);
        this.#inFlight = Array.from({ length: options.ranks }, () => []);
    }
    /** whether the pull path can ever return anything (else the worker need not build event objects) */
    get pullEnabled() {
        return this.options.bufferMaxSize > 0 && !this.options.push;
    }
    get capacity() {
        return this.options.bufferMaxSize * this.options.ranks;
    }
    /** events waiting in rank 0's queue (after gathering up to `now`) */
    size(now) {
        this.#gather(now);
        return this.#queue.length - this.#head;
    }
    emit(rank, data, now) {
        if (this.options.bufferMaxSize <= 0)
            return; // no event manager exists
        const eventId = this.#nextId[rank];
        this.#nextId[rank] = eventId + 1;
        this.stats.emitted++;
        if (this.options.push)
            return; // published elsewhere; the pull path never sees it
        const event = {
            eventId,
            data,
            windowSize: this.options.windowSize,
            attentionDpRank: this.options.ranks > 1 ? rank : null,
            hashAlgo: null,
            layerGroupId: null,
        };
        if (rank === 0) {
            this.#gather(now);
            this.#enqueue(event);
            return;
        }
        if (this.options.adpGatherDrop) {
            this.stats.dropped++;
            return;
        }
        this.#inFlight[rank].push({ arrival: now + this.options.gatherDelayMs, event });
    }
    /** POST /kv_cache_events: everything queued, oldest first; the queue is empty afterwards */
    drain(now) {
        this.stats.drains++;
        this.#gather(now);
        const events = this.#queue.slice(this.#head);
        this.#queue = [];
        this.#head = 0;
        this.stats.drained += events.length;
        return events;
    }
    /** worker restart: a new manager, ids from 0, nothing queued */
    reset() {
        this.#nextId.fill(0);
        for (const list of this.#inFlight)
            list.length = 0;
        this.#queue = [];
        this.#head = 0;
    }
    #enqueue(event) {
        this.#queue.push(event);
        if (this.#queue.length - this.#head > this.capacity) {
            this.#head++;
            this.stats.dropped++;
            if (this.#head > 4096 && this.#head * 2 > this.#queue.length) {
                this.#queue = this.#queue.slice(this.#head);
                this.#head = 0;
            }
        }
    }
    /** moves gathered events that reached rank 0 by `now` into its queue, in arrival order */
    #gather(now) {
        const lists = this.#inFlight;
        const cursors = new Array(lists.length).fill(0);
        for (;;) {
            let best = -1;
            let bestArrival = Number.POSITIVE_INFINITY;
            for (let r = 1; r < lists.length; r++) {
                const item = lists[r][cursors[r]];
                if (item !== undefined && item.arrival <= now && item.arrival < bestArrival) {
                    best = r;
                    bestArrival = item.arrival;
                }
            }
            if (best < 0)
                break;
            this.#enqueue(lists[best][cursors[best]].event);
            cursors[best]++;
        }
        for (let r = 1; r < lists.length; r++)
            if (cursors[r] > 0)
                lists[r].splice(0, cursors[r]);
    }
}
//# sourceMappingURL=event-queue.js.map