// The relay's per-worker event log: every event drained from a CTX worker, as its exact JSON bytes, numbered with
// relay sequence numbers, and one cursor per consumer so each consumer (router replica) receives every event exactly
// once and in order. Pure and deterministic: no I/O, no clock (`now` is a parameter). The item type is generic so
// the simulator's relay (which passes KvEvent objects, not texts) runs this same log, with a size of its own.
//
// Decisions:
// - One shared log, not one queue per consumer: memory is bounded once (maxEvents, maxBytes), and a backlog is the
//   span between a consumer's cursor and the log's end. Overflow evicts the oldest events; each consumer whose cursor
//   was inside the evicted span is told how many it lost (drop-oldest, counted per consumer).
// - Events every known consumer has read are released once they are older than retainReadMs, so a replica that
//   joins shortly after another (replicas start together; one polls first) still gets the stream from the start.
//   Before any consumer exists the log keeps events up to the bound, so the router's first poll gets the worker's
//   history from the sidecar's start (`created` first).
// - A consumer that arrives while no other is known (the first, or the router back after being forgotten) starts
//   where the last known consumers stopped reading, so events evicted in between count as dropped for it; a consumer
//   that joins beside others starts at the oldest retained event (what it missed before joining is not "dropped").
// - A consumer idle for longer than consumerIdleMs is forgotten so it stops pinning the log (and so is the longest
//   silent one when maxConsumers are known and another arrives); if it returns it is new,
//   except that it resumes after the last event it read (remembered for up to MAX_FORGOTTEN consumers, the oldest
//   memory discarded first and counted): events retained for another, lagging consumer are never delivered twice,
//   and events that left the log meanwhile (released after the others read them, or evicted) count as dropped to it.
// - Items may be views of the body they were drained in (one allocation a drain, not one an event). The log only
//   ever loses its oldest items, so at most its oldest body is kept in part; when it is, the survivors are copied out
//   of it (`detach`), so the bytes the log holds stay the bytes it counts against maxBytes.
// - Events every consumer has read are also released, oldest first, while the log holds more than the relay's share
//   of the process's read-history budget (read-retention.ts): that history serves only a replica joining late.
import { KvsentinelError } from '../errors.js';
import type { ReadRetentionShare } from './read-retention.js';

export interface EventBufferOptions {
  readonly maxEvents: number;
  /** approximate: bytes of the retained items (UTF-16 units of texts; the sizes `sizeOf` gives for other items) */
  readonly maxBytes: number;
  readonly consumerIdleMs: number;
  /** events every consumer has read stay this long for consumers that join later */
  readonly retainReadMs: number;
  /**
   * consumers known at once; a new one past it makes the longest-silent one forgotten (as if idle: it resumes where
   * it stopped if it returns). Consumer names come from a request header, so this bounds what a client can add.
   */
  readonly maxConsumers: number;
}

export interface ConsumerRead<T = string> {
  readonly consumer: string;
  /** relay seq of items[0] */
  readonly fromSeq: number;
  /** one past the last delivered seq */
  readonly toSeq: number;
  readonly items: readonly T[];
  /** events this consumer lost (evicted unread) since its previous read */
  readonly dropped: number;
}

export interface ConsumerStats {
  readonly consumer: string;
  readonly cursor: number;
  readonly backlog: number;
  readonly delivered: number;
  readonly dropped: number;
  readonly reads: number;
  readonly lastReadAt: number;
}

export interface EventBufferStats {
  readonly nextSeq: number;
  readonly retainedFrom: number;
  readonly retainedEvents: number;
  readonly retainedBytes: number;
  /** events evicted by the bound (whether or not a consumer had read them) */
  readonly evicted: number;
  readonly expiredConsumers: number;
  /** consumers forgotten early because maxConsumers were known */
  readonly evictedConsumers: number;
  /** forgotten consumers whose resume position was discarded by the MAX_FORGOTTEN bound */
  readonly forgottenDiscarded: number;
  /** events every consumer had read, released before retainReadMs because the read-history budget was full */
  readonly releasedForBudget: number;
  readonly consumers: readonly ConsumerStats[];
}

interface Consumer {
  cursor: number;
  /** toSeq of its last read (the cursor may move further when eviction skips events it never read) */
  readUpTo: number;
  delivered: number;
  dropped: number;
  pendingDropped: number;
  reads: number;
  lastReadAt: number;
}

// Sizing: a stored event of a 40k-token prompt (tpb 128) is ~2 MB of JSON, and under load read events are retained
// until the byte bound, so the bound is what a relay costs in steady state (64 MiB; three relays fit a 768 MiB heap).
export const DEFAULT_EVENT_BUFFER_OPTIONS: EventBufferOptions = {
  maxEvents: 200_000,
  maxBytes: 64 * 1024 * 1024,
  // the router polls only when requests finish: an idle night must not make it a stranger
  consumerIdleMs: 60 * 60_000,
  retainReadMs: 10_000,
  // router replicas of one deployment: a handful; the rest are strangers
  maxConsumers: 64,
};

/** bound on the resume positions kept for forgotten consumers */
export const MAX_FORGOTTEN = 1024;

/** The JSON array of drained items (each the exact bytes of one event), as a `/kv_cache_events` body. */
export function serializeEventItems(items: readonly Uint8Array[]): Uint8Array {
  let size = 2 + Math.max(0, items.length - 1);
  for (const item of items) size += item.byteLength;
  const out = new Uint8Array(size);
  out[0] = 91;
  let at = 1;
  for (let k = 0; k < items.length; k++) {
    if (k > 0) out[at++] = 44;
    out.set(items[k]!, at);
    at += items[k]!.byteLength;
  }
  out[at] = 93;
  return out;
}

/** How items that are views of one drain body are told apart and copied out of it. */
export interface ItemDetach<T> {
  sameBody(a: T, b: T): boolean;
  copy(item: T): T;
}

/** Items cut out of a drain body as views of its bytes (splitJsonArrayBytes). */
export const BODY_VIEWS: ItemDetach<Uint8Array> = {
  sameBody: (a, b) => a.buffer === b.buffer,
  // Uint8Array's own slice: a Node Buffer's slice() would be another view
  copy: (item) => Uint8Array.prototype.slice.call(item),
};

/** an item's weight against maxBytes: a JSON text's length, or an item's bytes */
function textLength(item: unknown): number {
  return item instanceof Uint8Array ? item.byteLength : (item as string).length;
}

export class EventBuffer<T = string> {
  readonly #options: EventBufferOptions;
  readonly #sizeOf: (item: T) => number;
  readonly #detach: ItemDetach<T> | null;
  readonly #readShare: Pick<ReadRetentionShare, 'limitBytes'> | null;
  #log: T[] = [];
  #appendedAt: number[] = []; // parallel to #log
  #head = 0; // index in #log of seq #retainedFrom
  #retainedFrom = 0;
  #bytes = 0;
  #evicted = 0;
  #expired = 0;
  #evictedConsumers = 0;
  /** the lowest position the known consumers had actually read to, as of the last read */
  #resumeFrom = 0;
  readonly #consumers = new Map<string, Consumer>();
  /** forgotten consumer -> the toSeq of its last read */
  readonly #forgotten = new Map<string, number>();
  #forgottenDiscarded = 0;
  #releasedForBudget = 0;

  /**
   * `sizeOf` counts an item against maxBytes; the default is a text's length or an item's bytes. `detach`: items are
   * views of their drain body (BODY_VIEWS), copied out of it once the body is kept only in part. `readShare`: the
   * relay's part of the read-history budget (null: read events stay retainReadMs within maxBytes).
   */
  constructor(
    options: Partial<EventBufferOptions> = {},
    sizeOf: (item: T) => number = textLength,
    detach: ItemDetach<T> | null = null,
    readShare: Pick<ReadRetentionShare, 'limitBytes'> | null = null,
  ) {
    this.#options = { ...DEFAULT_EVENT_BUFFER_OPTIONS, ...options };
    this.#sizeOf = sizeOf;
    this.#detach = detach;
    this.#readShare = readShare;
    if (!(this.#options.maxEvents >= 1) || !(this.#options.maxBytes >= 1) || !(this.#options.maxConsumers >= 1)) {
      throw new KvsentinelError('internal', 'EventBuffer: maxEvents, maxBytes and maxConsumers must be >= 1');
    }
  }

  get nextSeq(): number {
    return this.#retainedFrom + this.#log.length - this.#head;
  }

  /** Appends drained events (their exact JSON, in worker order); returns the relay seq of the first. */
  append(items: readonly T[], now: number): number {
    const firstSeq = this.nextSeq;
    for (const item of items) {
      this.#log.push(item);
      this.#appendedAt.push(now);
      this.#bytes += this.#sizeOf(item);
    }
    this.#enforceBound();
    this.#releaseRead(now);
    return firstSeq;
  }

  /** Everything since the consumer's last read, exactly once; advances its cursor. */
  read(consumer: string, now: number): ConsumerRead<T> {
    this.#expireIdle(now, consumer);
    let state = this.#consumers.get(consumer);
    if (state === undefined) {
      if (this.#consumers.size >= this.#options.maxConsumers) this.#evictConsumer();
      let start = this.#consumers.size === 0 ? Math.min(this.#resumeFrom, this.#retainedFrom) : this.#retainedFrom;
      const prior = this.#forgotten.get(consumer);
      if (prior !== undefined) {
        // it resumes after what it read: whatever left the log since then was lost to it, and is counted so
        this.#forgotten.delete(consumer);
        start = prior;
      }
      const lost = Math.max(0, this.#retainedFrom - start);
      const cursor = Math.max(start, this.#retainedFrom);
      state = {
        cursor,
        readUpTo: cursor,
        delivered: 0,
        dropped: lost,
        pendingDropped: lost,
        reads: 0,
        lastReadAt: now,
      };
      this.#consumers.set(consumer, state);
    }
    const fromSeq = state.cursor;
    const toSeq = this.nextSeq;
    const items = this.#log.slice(this.#head + (fromSeq - this.#retainedFrom), this.#log.length);
    const dropped = state.pendingDropped;
    state.cursor = toSeq;
    state.readUpTo = toSeq;
    let resume = toSeq;
    for (const c of this.#consumers.values()) resume = Math.min(resume, c.readUpTo);
    this.#resumeFrom = resume;
    state.delivered += items.length;
    state.pendingDropped = 0;
    state.reads++;
    state.lastReadAt = now;
    this.#releaseRead(now);
    return { consumer, fromSeq, toSeq, items, dropped };
  }

  stats(): EventBufferStats {
    const nextSeq = this.nextSeq;
    const consumers = [...this.#consumers].map(([consumer, c]) => ({
      consumer,
      cursor: c.cursor,
      backlog: nextSeq - c.cursor,
      delivered: c.delivered,
      dropped: c.dropped,
      reads: c.reads,
      lastReadAt: c.lastReadAt,
    }));
    return {
      nextSeq,
      retainedFrom: this.#retainedFrom,
      retainedEvents: this.#log.length - this.#head,
      retainedBytes: this.#bytes,
      evicted: this.#evicted,
      expiredConsumers: this.#expired,
      evictedConsumers: this.#evictedConsumers,
      forgottenDiscarded: this.#forgottenDiscarded,
      releasedForBudget: this.#releasedForBudget,
      consumers,
    };
  }

  #expireIdle(now: number, keep: string): void {
    for (const [id, c] of this.#consumers) {
      if (id !== keep && now - c.lastReadAt > this.#options.consumerIdleMs) {
        this.#forget(id, c);
        this.#expired++;
      }
    }
  }

  /** the consumer silent for longest makes room (maxConsumers) */
  #evictConsumer(): void {
    let oldest: [string, Consumer] | null = null;
    for (const entry of this.#consumers)
      if (oldest === null || entry[1].lastReadAt < oldest[1].lastReadAt) oldest = entry;
    if (oldest === null) return;
    this.#forget(oldest[0], oldest[1]);
    this.#evictedConsumers++;
  }

  #forget(id: string, c: Consumer): void {
    this.#consumers.delete(id);
    this.#forgotten.set(id, c.readUpTo);
    if (this.#forgotten.size > MAX_FORGOTTEN) {
      const first = this.#forgotten.keys().next().value as string;
      this.#forgotten.delete(first);
      this.#forgottenDiscarded++;
    }
  }

  #enforceBound(): void {
    const count = this.#log.length - this.#head;
    let drop = 0;
    let bytes = this.#bytes;
    while (count - drop > this.#options.maxEvents || (bytes > this.#options.maxBytes && count - drop > 1)) {
      bytes -= this.#sizeOf(this.#log[this.#head + drop] as T);
      drop++;
    }
    if (drop === 0) return;
    this.#evicted += drop;
    this.#dropFront(drop, bytes);
    for (const c of this.#consumers.values()) {
      if (c.cursor < this.#retainedFrom) {
        const lost = this.#retainedFrom - c.cursor;
        c.dropped += lost;
        c.pendingDropped += lost;
        c.cursor = this.#retainedFrom;
      }
    }
  }

  #releaseRead(now: number): void {
    if (this.#consumers.size === 0) return;
    let min = this.nextSeq;
    for (const c of this.#consumers.values()) min = Math.min(min, c.cursor);
    const cutoff = now - this.#options.retainReadMs;
    const limit = this.#readShare?.limitBytes() ?? Number.POSITIVE_INFINITY;
    let release = 0;
    let early = 0;
    let bytes = this.#bytes;
    const readable = min - this.#retainedFrom;
    for (; release < readable; release++) {
      const expired = (this.#appendedAt[this.#head + release] as number) <= cutoff;
      if (!expired && bytes <= limit) break;
      if (!expired) early++;
      bytes -= this.#sizeOf(this.#log[this.#head + release] as T);
    }
    this.#releasedForBudget += early;
    if (release > 0) this.#dropFront(release, bytes);
  }

  #dropFront(n: number, bytesAfter: number): void {
    // the slots go now, not at the next compaction: thousands of evicted events, each maybe a large stored event,
    // would otherwise stay in memory past the byte bound
    const lastDropped = this.#log[this.#head + n - 1] as T;
    this.#log.fill(undefined as T, this.#head, this.#head + n);
    this.#head += n;
    this.#detachSurvivors(lastDropped);
    this.#retainedFrom += n;
    this.#bytes = bytesAfter;
    if (this.#head === this.#log.length) {
      this.#log = [];
      this.#appendedAt = [];
      this.#head = 0;
    } else if (this.#head > 4096 && this.#head * 2 > this.#log.length) {
      this.#log = this.#log.slice(this.#head);
      this.#appendedAt = this.#appendedAt.slice(this.#head);
      this.#head = 0;
    }
  }

  /** the oldest items left that share a body with one just dropped: copied out, so the body can go */
  #detachSurvivors(dropped: T): void {
    const detach = this.#detach;
    if (detach === null) return;
    for (let k = this.#head; k < this.#log.length && detach.sameBody(this.#log[k] as T, dropped); k++)
      this.#log[k] = detach.copy(this.#log[k] as T);
  }
}
