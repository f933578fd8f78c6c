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
 * the socket is looked at once every this many messages (a look is a getsockopt). Counted looks land at the same
 * places in a publisher's regular bursts (the flood publisher sends 64 at a time), where the rest of the burst is
 * queued, so alone they can read a stream that keeps up as one long backlog: the idle look between messages
 * (idleLook) is what finds it empty between bursts
 */
export const LOOK_EVERY = 16;
/** a loop found waiting is still waiting, with nothing taken, this much later: its queue is empty */
export const IDLE_CONFIRM_MS = 5;

export class SocketBacklog {
  /** the receive loop is waiting on the socket (its loop sets this around each receive) */
  waiting = false;
  /** when the queue was first found non-empty after it was last found empty; null: it was empty at the last look */
  #since: number | null = null;
  /** the last backlog long enough to count: when it ended and how long it had lasted */
  #lastEnd: number | null = null;
  #lastMs = 0;
  #messages = 0;
  /** gaps that showed while the queue was non-empty but not yet for BACKLOG_MS: told once the queue decides */
  #undecided: ((behindMs: number | null) => void)[] = [];

  /** messages taken so far */
  get messages(): number {
    return this.#messages;
  }

  /** One message taken from `socket`; one message in LOOK_EVERY, it is looked at (whether more messages wait). */
  taken(clock: () => number, socket: { readonly readable: boolean }): void {
    if (++this.#messages % LOOK_EVERY !== 0) return;
    this.seen(socket.readable, clock());
  }

  /**
   * The look between messages (once a second), so a stream that stopped with a few in the queue still decides its
   * gaps, and a bursty one is seen empty between bursts (the looks after every LOOK_EVERY messages can land at the
   * same place in every burst, the rest of it queued). It never asks the socket: zeromq's `readable` is a getsockopt
   * of ZMQ_EVENTS, which takes the socket's wake-up signal, and taken while a receive waits it left that receive
   * waiting for good (a stalled subscriber went deaf after its first 100 batches). A receive that waits found the
   * queue empty, unless zeromq put off a ready read (it does after 512 reads in a row, to let the event loop
   * breathe) until later in the same loop turn: so the queue reads empty only if the loop is still waiting, with no
   * message taken, IDLE_CONFIRM_MS after it was found waiting.
   */
  idleLook(clock: () => number): void {
    if (!this.waiting) return;
    const taken = this.#messages;
    const confirm = setTimeout(() => {
      if (this.waiting && this.#messages === taken) this.seen(false, clock());
    }, IDLE_CONFIRM_MS);
    confirm.unref();
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
