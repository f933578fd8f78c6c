// Whether a SUB socket's own queue holds a backlog: the subscriber takes batches slower than they arrive. A PUB drops
// batches for a subscriber only when that subscriber's queue is full, so a seq gap that shows while our queue has not
// been empty for a while is our own loss (the high-water mark reached), not the deployment's; a subscriber whose
// queue keeps emptying was keeping up, and a gap it sees was dropped upstream. This is what tells the two apart when
// the event loop is busy but on time (every receive yields to it), where the load monitor's loop delay sees nothing.
// A gap can show before a backlog is long enough to count: the queue behind a slow subscriber holds thousands of
// batches (the high-water marks and the kernel's socket buffers), and it reads past a hole within the first second.
// Such a gap is decided when the queue is: a backlog that lasts BACKLOG_MS makes it ours, an empty queue first
// makes it upstream's.

/** a queue found non-empty at every look for this long is a backlog, not a burst */
export const BACKLOG_MS = 1_000;
/** a gap that shows this soon after a backlog ended is still its loss (the hole was queued behind it) */
export const BACKLOG_GRACE_MS = 2_000;
/**
 * the socket is looked at once every this many messages: a look is a getsockopt of ZMQ_EVENTS, which also runs the
 * socket's pending commands (at 50,000 messages/s this is a look every 1.3 ms; the once-a-second look covers a
 * stream that slowed down)
 */
export const LOOK_EVERY = 64;

export class SocketBacklog {
  /** when the queue was first found non-empty after it was last found empty; null: it was empty at the last look */
  #since: number | null = null;
  /** the last backlog long enough to count: when it ended and how long it had lasted */
  #lastEnd: number | null = null;
  #lastMs = 0;
  #messages = 0;
  /** gaps that showed while the queue was non-empty but not yet for BACKLOG_MS: told once the queue decides */
  #undecided: ((behindMs: number | null) => void)[] = [];

  /** One message taken from `socket`; one message in LOOK_EVERY, it is looked at (whether more messages wait). */
  taken(clock: () => number, socket: { readonly readable: boolean }): void {
    if (++this.#messages % LOOK_EVERY !== 0) return;
    this.seen(socket.readable, clock());
  }

  /** A look between messages (once a second): a stream that stopped with a few in the queue still decides its gaps. */
  look(socket: { readonly readable: boolean; readonly closed: boolean }, now: number): void {
    if (!socket.closed) this.seen(socket.readable, now);
  }

  /** What a look at the socket found. */
  seen(nonEmpty: boolean, now: number): void {
    if (nonEmpty) {
      this.#since ??= now;
      if (this.#undecided.length > 0 && now - this.#since >= BACKLOG_MS) this.#decide(now - this.#since);
      return;
    }
    if (this.#since !== null && now - this.#since >= BACKLOG_MS) {
      this.#lastEnd = now;
      this.#lastMs = now - this.#since;
    }
    this.#since = null;
    if (this.#undecided.length > 0) this.#decide(this.behindMs(now));
  }

  /**
   * Tells `decide` whether a gap that showed at `now` is the subscriber's own loss (how long it has been behind) or
   * not (null): at once when the queue says so, else once a later look does (see seen()).
   */
  whenKnown(now: number, decide: (behindMs: number | null) => void): void {
    const behind = this.behindMs(now);
    if (behind !== null || this.#since === null) decide(behind);
    else this.#undecided.push(decide);
  }

  #decide(behindMs: number | null): void {
    const waiting = this.#undecided;
    this.#undecided = [];
    for (const decide of waiting) decide(behindMs);
  }

  /** How long the subscriber has been behind (or was, until a moment ago); null: it is keeping up. */
  behindMs(now: number): number | null {
    if (this.#since !== null && now - this.#since >= BACKLOG_MS) return now - this.#since;
    if (this.#lastEnd !== null && now - this.#lastEnd <= BACKLOG_GRACE_MS) return this.#lastMs;
    return null;
  }
}
