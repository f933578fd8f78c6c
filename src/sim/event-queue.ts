// A CTX worker's KV-event manager as `POST /kv_cache_events` exposes it (docs/trtllm-wire.md §2, §3):
// one event_id counter per attention-DP rank starting at 0; events of ranks ≠ 0 are gathered into rank 0's
// queue after the gather period; the queue holds event_buffer_max_size × ADP-size events and drops the oldest
// on overflow; a read drains it. event_buffer_max_size 0 means no manager at all, and the push (ZMQ) path leaves
// the pull queue empty: both read as [] with HTTP 200.
import type { KvEvent, KvEventData } from '../core/wire/kv-event.js';

export interface EventQueueOptions {
  /** attention-DP size; 1 = no attention DP (events carry no attention_dp_rank) */
  readonly ranks: number;
  /** event_buffer_max_size per rank; 0 = events disabled */
  readonly bufferMaxSize: number;
  /** kv_events_config publisher set: events go to the push path, the pull queue stays empty */
  readonly push: boolean;
  /** fault: the ADP gather loses every event of ranks ≠ 0 */
  readonly adpGatherDrop: boolean;
  /** attention_dp_events_gather_period_ms (default 5) */
  readonly gatherDelayMs: number;
  readonly windowSize: number;
  /** fault: from this time on another consumer takes every event the moment it is queued (a pump); null = never */
  readonly pumpFromMs?: number | null;
}

interface Pending {
  readonly arrival: number;
  readonly event: KvEvent;
}

export interface EventQueueStats {
  /** events created by the ranks' managers (ids consumed) */
  emitted: number;
  /** events lost: dropped oldest on overflow, or lost in the ADP gather */
  dropped: number;
  /** events returned by drains */
  drained: number;
  /** drains (POST /kv_cache_events) served */
  drains: number;
  /** events the pump took before any drain could */
  taken: number;
}

/** Where push-path events go (the live driver's ZMQ publisher); restart() is a new manager's new stream. */
export interface PushSink {
  publish(rank: number, event: KvEvent): void;
  restart(): void;
}

export class WorkerEventQueue {
  readonly options: EventQueueOptions;
  /** the push path's consumer; without one, pushed events go nowhere (as with no subscriber) */
  pushSink: PushSink | null = null;
  readonly stats: EventQueueStats = { emitted: 0, dropped: 0, drained: 0, drains: 0, taken: 0 };
  readonly #nextId: number[];
  /** gathered (ranks ≠ 0) events on their way to rank 0, per rank, in emission order */
  readonly #inFlight: Pending[][];
  #queue: KvEvent[] = [];
  #head = 0;

  constructor(options: EventQueueOptions) {
    this.options = options;
    this.#nextId = new Array<number>(options.ranks).fill(0);
    this.#inFlight = Array.from({ length: options.ranks }, () => []);
  }

  /** whether the pull path can ever return anything (else the worker need not build event objects) */
  get pullEnabled(): boolean {
    return this.options.bufferMaxSize > 0 && !this.options.push;
  }

  get capacity(): number {
    return this.options.bufferMaxSize * this.options.ranks;
  }

  /** events waiting in rank 0's queue (after gathering up to `now`) */
  size(now: number): number {
    this.#gather(now);
    return this.#queue.length - this.#head;
  }

  emit(rank: number, data: KvEventData, now: number): void {
    if (this.options.bufferMaxSize <= 0) return; // no event manager exists
    const eventId = this.#nextId[rank]!;
    this.#nextId[rank] = eventId + 1;
    this.stats.emitted++;
    if (this.options.push && this.pushSink === null) return; // published elsewhere; the pull path never sees it
    const event: KvEvent = {
      eventId,
      data,
      windowSize: this.options.windowSize,
      attentionDpRank: this.options.ranks > 1 ? rank : null,
      hashAlgo: null,
      layerGroupId: null,
    };
    if (this.options.push) {
      this.pushSink?.publish(rank, event);
      return;
    }
    if (rank === 0) {
      this.#gather(now);
      this.#enqueue(event, now);
      return;
    }
    if (this.options.adpGatherDrop) {
      this.stats.dropped++;
      return;
    }
    this.#inFlight[rank]!.push({ arrival: now + this.options.gatherDelayMs, event });
  }

  /** POST /kv_cache_events: everything queued, oldest first; the queue is empty afterwards */
  drain(now: number): KvEvent[] {
    this.stats.drains++;
    this.#gather(now);
    const events = this.#queue.slice(this.#head);
    this.#queue = [];
    this.#head = 0;
    this.stats.drained += events.length;
    return events;
  }

  /** worker restart: a new manager, ids from 0, nothing queued */
  reset(): void {
    this.pushSink?.restart();
    this.#nextId.fill(0);
    for (const list of this.#inFlight) list.length = 0;
    this.#queue = [];
    this.#head = 0;
  }

  #enqueue(event: KvEvent, now: number): void {
    const pumpFrom = this.options.pumpFromMs ?? null;
    if (pumpFrom !== null && now >= pumpFrom) {
      this.stats.taken++;
      return;
    }
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
  #gather(now: number): void {
    const lists = this.#inFlight;
    const cursors = new Array<number>(lists.length).fill(0);
    for (;;) {
      let best = -1;
      let bestArrival = Number.POSITIVE_INFINITY;
      for (let r = 1; r < lists.length; r++) {
        const item = lists[r]![cursors[r]!];
        if (item !== undefined && item.arrival <= now && item.arrival < bestArrival) {
          best = r;
          bestArrival = item.arrival;
        }
      }
      if (best < 0) break;
      this.#enqueue(lists[best]![cursors[best]!]!.event, bestArrival);
      cursors[best]!++;
    }
    for (let r = 1; r < lists.length; r++) if (cursors[r]! > 0) lists[r]!.splice(0, cursors[r]);
  }
}
