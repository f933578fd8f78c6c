// Orders one rank's stream by its batch seq (u64, from 0 per publisher life) and decides what each arrival means:
// the next batch (deliver), a jump (a gap: batches lost to a full publisher queue, a failed send, or this
// subscriber's receive high-water mark), or a new publisher life (reset the rank's tables). A new life shows as a
// seq below the last, as a changed publisher id (the caller says so: restart()), or after a reconnection
// (reconnected()) whose first batch is not the next one: a publisher that restarted and published past the old seq
// before this subscriber reconnected looks like a gap. With a replay endpoint that case is settled by asking for
// the publisher's whole buffer: the same life still holds the last batch delivered, byte for byte; anything else
// is a new life. Without one it is presumed new: stale blocks in a table are worse than a table started over.
// With a replay endpoint a gap is filled before anything later is delivered: later live batches are held (bounded)
// until the replay ends, so removals never overtake the stores they undo. The first batch heard, and the first of a
// new life, also ask for the history before it (what the publisher still buffers). History nobody could replay is
// not a loss — kvsentinel was not listening — but the table lacks what was stored then: a `gap` with `history`
// says how many batches that was (0: the publisher's whole life was replayed). After a restart the missing start
// of the new life is a real loss. A publisher's buffer has no holes, but its answer can: vLLM sends a whole replay
// in one tight loop from a ROUTER, which drops what the pipe to us cannot hold. Replies that skip a seq after the
// first reply of a round were dropped on the way, so the rest of that round is ignored and, once it ends, the
// replay is asked again from the first missing seq (while each round brings something, at most MAX_REPLAY_ROUNDS).
// Pure: the socket code executes the returned actions.

import { count, holePending, openPending, type Pending, type Seen, type Verify } from './replay-round.js';

export type SequencerAction<T> =
  | { readonly type: 'deliver'; readonly seq: bigint; readonly item: T; readonly replayed: boolean }
  | { readonly type: 'replay'; readonly fromSeq: bigint }
  /** batches that will never arrive: `filled` of the missing ones did arrive by replay */
  | { readonly type: 'gap'; readonly lost: number; readonly filled: number; readonly history: boolean }
  | { readonly type: 'reset'; readonly fromSeq: bigint; readonly toSeq: bigint; readonly cause: LifeChange };

/** what showed a new publisher life */
export type LifeChange = 'seq-back' | 'publisher-id' | 'reconnect-replay-differs' | 'reconnect-unverifiable';

export interface SequencerOptions<T> {
  readonly replay: boolean;
  /** live batches held while a replay runs; past it the replay is abandoned (its missing batches count as lost) */
  readonly maxHeld: number;
  /** whether two batches are the same (a replayed copy of a delivered one); without it reconnections are unverifiable */
  readonly same?: (a: T, b: T) => boolean;
}

/** rounds of one replay whose answers were torn on the way; past it what is still missing counts as lost */
export const MAX_REPLAY_ROUNDS = 32;

export class StreamSequencer<T> {
  readonly #options: SequencerOptions<T>;
  #next: bigint | null = null;
  #pending: Pending<T> | null = null;
  #lives = 0;
  #last: Seen<T> | null = null;
  /** reconnected since the last batch: the next one may be of another life */
  #suspect = false;
  /** one past the highest seq the live stream brought in this life: below it, a replay ran ahead of the live stream */
  #liveNext: bigint | null = null;
  /**
   * a gap's replay filled it and its answer goes on past everything delivered: the live stream is behind the
   * publisher (its TCP window closed while the sidecar stalled, and the sender waits out its zero-window probe, up to
   * seconds after the sidecar reads again), so the answer is delivered as it comes, ahead of the live stream
   */
  #catchUp: { rounds: number; progressed: boolean } | null = null;

  constructor(options: SequencerOptions<T>) {
    this.#options = options;
  }

  /** the next seq expected, null before the first batch */
  get expected(): bigint | null {
    return this.#next;
  }

  get replaying(): boolean {
    return this.#pending !== null;
  }

  /** a replay's answer is still wanted: a gap it fills, or the batches past it that the live stream has not brought */
  get readingReplay(): boolean {
    return this.#pending !== null || this.#catchUp !== null;
  }

  /**
   * Before any batch was heard (just subscribed): ask for everything the publisher still buffers. A subscription
   * takes effect a moment after the connection, and a rank that publishes rarely may never show a later batch that
   * would reveal what was missed.
   */
  history(): SequencerAction<T>[] {
    if (!this.#options.replay || this.#next !== null || this.#pending !== null) return [];
    this.#pending = openPending(null, true);
    return [{ type: 'replay', fromSeq: 0n }];
  }

  /**
   * After the sidecar stalled: asks whether the publisher has batches past the last one delivered that the live
   * stream has not brought (its TCP window closed in the stall, and the live stream can stay silent for seconds while
   * the publisher's kernel waits out its zero-window probe; see #catchUp). Nothing while a replay is in flight.
   */
  catchUp(): SequencerAction<T>[] {
    if (
      !this.#options.replay ||
      this.#next === null ||
      this.#suspect ||
      this.#pending !== null ||
      this.#catchUp !== null
    )
      return [];
    this.#catchUp = { rounds: 1, progressed: false };
    return [{ type: 'replay', fromSeq: this.#next }];
  }

  /** The connection to the publisher was lost and made again: the next batch decides whether its life went on. */
  reconnected(): void {
    if (this.#next !== null) this.#suspect = true;
  }

  /** The caller knows the publisher is the same life (its id did not change): no verification needed. */
  sameLife(): void {
    this.#suspect = false;
  }

  /** The caller knows a new publisher life began with this batch (its publisher id changed). */
  restart(seq: bigint, item: T): SequencerAction<T>[] {
    const out: SequencerAction<T>[] = [];
    // the old life's batches held by a replay in flight come first; then the new life starts over
    if (this.#pending !== null) out.push(...this.#settle(this.#pending));
    this.#suspect = false;
    this.#newLife(seq, item, 'publisher-id', out);
    this.#liveNext = seq + 1n;
    return out;
  }

  /** A live batch arrived. */
  live(seq: bigint, item: T): SequencerAction<T>[] {
    const out: SequencerAction<T>[] = [];
    const next = this.#next;
    const liveNext = this.#liveNext;
    if (next !== null && liveNext !== null && !this.#suspect && seq >= liveNext && seq < next) {
      // the live copy of a batch a replay already delivered (the live stream was behind the replay): nothing new
      this.#liveNext = seq + 1n;
      return out;
    }
    this.#live(seq, item, out);
    if (this.#liveNext === null || seq >= this.#liveNext) this.#liveNext = seq + 1n;
    return out;
  }

  /**
   * A replayed batch arrived (outside a replay, or before its range, it is a duplicate and ignored; past the range
   * of a gap's replay it ends the round).
   */
  replayed(seq: bigint, item: T): SequencerAction<T>[] {
    const p = this.#pending;
    if (p === null) return this.#caughtUp(seq, item);
    const out: SequencerAction<T>[] = [];
    if (p.verify !== null) {
      this.#verifyReply(p, p.verify, seq, item, out);
      return out;
    }
    // replies come in seq order: once one is past the gap, nothing of it is still to come (and if the round had
    // begun, what it still lacked was dropped on the way)
    if (seq >= p.to) {
      if (p.roundStarted && p.next < p.to) p.torn = true;
      // the gap is filled and the answer goes on (vLLM sends its whole buffer from the seq asked for): it holds what
      // the next hole among the held batches lacks, so the same round fills that one too, with no request of its own
      if (!p.torn && !p.open && p.next >= p.to) {
        const out: SequencerAction<T>[] = [];
        if (this.#nextHole(p, out)) return [...out, ...this.replayed(seq, item)];
        if (this.#pending !== null) return out;
        this.#catchUp = { rounds: p.rounds, progressed: false };
        return [...out, ...this.#caughtUp(seq, item)];
      }
      return this.replayEnded();
    }
    if (p.torn || seq < p.next) return [];
    this.#fill(p, seq, item, out);
    return out;
  }

  /** A replayed batch at `seq` would be ignored (a duplicate, or the rest of a torn round): no need to read it. */
  skipsReply(seq: bigint): boolean {
    const p = this.#pending;
    if (p === null) return this.#catchUp === null || this.#next === null || seq < this.#next;
    return p.verify === null && seq < p.to && (p.torn || seq < p.next);
  }

  /** A reply past every batch delivered (see #catchUp): the next one is delivered; a skip was dropped on the way. */
  #caughtUp(seq: bigint, item: T): SequencerAction<T>[] {
    const c = this.#catchUp;
    const next = this.#next;
    if (c === null || next === null || seq < next) return [];
    if (seq === next) {
      c.progressed = true;
      this.#next = seq + 1n;
      const out: SequencerAction<T>[] = [];
      this.#deliver(seq, item, true, out);
      return out;
    }
    // ask again from the first missing while rounds bring something; else the live stream brings it, or shows a gap
    this.#catchUp = c.progressed && c.rounds < MAX_REPLAY_ROUNDS ? { rounds: c.rounds + 1, progressed: false } : null;
    return this.#catchUp === null ? [] : [{ type: 'replay', fromSeq: next }];
  }

  /** The replay ended (its end marker, a timeout, or the socket failed): count what it did not bring, go on. */
  replayEnded(): SequencerAction<T>[] {
    const p = this.#pending;
    this.#catchUp = null;
    if (p === null) return [];
    if ((p.torn || p.inherited) && p.rounds < MAX_REPLAY_ROUNDS) {
      // what this round skipped (or did not reach) is still in the publisher's buffer: ask again from the first missing
      p.torn = false;
      p.inherited = false;
      p.roundStarted = false;
      p.rounds++;
      return [{ type: 'replay', fromSeq: p.next }];
    }
    return this.#settle(p);
  }

  /** The replay is over: count what it did not bring, deliver what was held. */
  #settle(p: Pending<T>): SequencerAction<T>[] {
    const out: SequencerAction<T>[] = [];
    // the buffer never reached the last batch delivered: nothing shows the old life goes on
    if (p.verify !== null) this.#decideNewLife(p, p.verify, 'reconnect-unverifiable', out);
    this.#pending = null;
    if (p.open) {
      // before the first reply nothing is known to be missing; the replay's own copies of held batches are dropped
      if (p.filled > 0) {
        const missing = p.history ? (p.first ?? 0n) : 0n;
        out.push({ type: 'gap', lost: count(missing) + p.lost, filled: p.filled, history: p.history });
        this.#next = p.next;
      } else if (p.countStart && p.held[0] !== undefined) {
        // a new life whose buffer brought nothing: everything before the batch that revealed it is lost
        out.push({ type: 'gap', lost: count(p.held[0].seq), filled: 0, history: false });
        this.#next = p.held[0].seq;
      }
      for (const h of p.held) if (this.#next === null || h.seq >= this.#next) this.#live(h.seq, h.item, out);
      return out;
    }
    p.lost += count(p.to - p.next);
    if (p.lost > 0 || p.filled > 0) out.push({ type: 'gap', lost: p.lost, filled: p.filled, history: p.history });
    this.#next = p.to;
    for (const h of p.held) this.#live(h.seq, h.item, out);
    return out;
  }

  /**
   * The gap `p` is filled: counts it and delivers the held batches up to the next hole among them, which becomes the
   * pending gap of the round in flight (true); without one the replay is over (false). One round per hole, at least
   * 100 ms apart, asked for the same buffer over and over (a stalled subscriber's holes came every 256 seqs: 26
   * requests where 12 now do), while the publisher's buffer moved on.
   */
  #nextHole(p: Pending<T>, out: SequencerAction<T>[]): boolean {
    if (p.lost > 0 || p.filled > 0) out.push({ type: 'gap', lost: p.lost, filled: p.filled, history: p.history });
    this.#pending = null;
    this.#next = p.to;
    for (let i = 0; i < p.held.length; i++) {
      const h = p.held[i]!;
      const next = this.#next;
      // a jump right after a reconnection is for #live to judge (it may be a new life)
      if (this.#pending === null && !this.#suspect && next !== null && h.seq > next) {
        // the round in flight is this hole's: a reply that skips into it was dropped on the way
        this.#pending = holePending(next, h.seq, p.held.slice(i), { history: false, inherited: true });
        return true;
      }
      this.#live(h.seq, h.item, out);
    }
    return false;
  }

  #deliver(seq: bigint, item: T, replayed: boolean, out: SequencerAction<T>[]): void {
    this.#last = { seq, item };
    out.push({ type: 'deliver', seq, item, replayed });
  }

  #fill(p: Pending<T>, seq: bigint, item: T, out: SequencerAction<T>[]): void {
    if (seq > p.next && p.roundStarted) {
      p.torn = true;
      return;
    }
    p.roundStarted = true;
    // the publisher's buffer no longer holds what the round's first reply skipped (a request for its whole buffer
    // has no known start)
    if (seq > p.next && (p.first !== null || p.countStart)) p.lost += count(seq - p.next);
    if (p.first === null) p.first = seq;
    p.filled++;
    p.next = seq + 1n;
    this.#deliver(seq, item, true, out);
  }

  #verifyReply(p: Pending<T>, v: Verify<T>, seq: bigint, item: T, out: SequencerAction<T>[]): void {
    if (seq < v.last.seq) {
      // bounded like held batches: past it the oldest go, and a new life's start counts them lost
      if (v.early.length >= this.#options.maxHeld) v.early.shift();
      v.early.push({ seq, item });
      return;
    }
    const same = this.#options.same;
    if (seq === v.last.seq && same !== undefined && same(item, v.last.item)) {
      // the same life: what follows the last batch delivered fills the gap; the earlier replies were delivered
      p.verify = null;
      p.history = false;
      p.next = v.base;
      p.first = v.base;
      return;
    }
    this.#decideNewLife(p, v, 'reconnect-replay-differs', out);
    this.#fill(p, seq, item, out);
  }

  /** The reconnection found another life: reset, then the replies so far are its history. */
  #decideNewLife(p: Pending<T>, v: Verify<T>, cause: LifeChange, out: SequencerAction<T>[]): void {
    p.verify = null;
    const firstHeld = p.held[0]?.seq ?? v.base;
    out.push({ type: 'reset', fromSeq: v.last.seq, toSeq: v.early[0]?.seq ?? firstHeld, cause });
    this.#lives++;
    this.#next = null;
    this.#liveNext = null;
    // the new life's start: what its buffer lacks was lost, not merely unheard
    p.history = false;
    p.countStart = true;
    p.next = 0n;
    for (const e of v.early) this.#fill(p, e.seq, e.item, out);
  }

  #newLife(seq: bigint, item: T, cause: LifeChange, out: SequencerAction<T>[]): void {
    const next = this.#next;
    if (next !== null) out.push({ type: 'reset', fromSeq: next - 1n, toSeq: seq, cause });
    this.#lives++;
    this.#next = null;
    this.#liveNext = null;
    this.#catchUp = null;
    this.#startAt(seq, item, out, false);
  }

  #live(seq: bigint, item: T, out: SequencerAction<T>[]): void {
    const p = this.#pending;
    if (p !== null) {
      p.held.push({ seq, item });
      // holding more is not bounded: the replay is abandoned, however many rounds it might still take
      if (p.held.length > this.#options.maxHeld) out.push(...this.#settle(p));
      return;
    }
    const next = this.#next;
    if (next === null || seq < next - 1n || (seq === next - 1n && this.#lives > 0 && seq === 0n)) {
      this.#suspect = false;
      if (next !== null) out.push({ type: 'reset', fromSeq: next - 1n, toSeq: seq, cause: 'seq-back' });
      this.#lives++;
      this.#liveNext = null;
      this.#catchUp = null;
      // a first batch above 0: the history before it (the start of a new life after a restart is a real loss)
      this.#startAt(seq, item, out, next === null);
      return;
    }
    if (this.#suspect && seq > next) {
      this.#suspect = false;
      this.#reconnectJump(next, seq, item, out);
      return;
    }
    if (seq === next) {
      this.#suspect = false;
      this.#next = seq + 1n;
      this.#deliver(seq, item, false, out);
      return;
    }
    if (seq < next) return; // the last batch again
    this.#gap(next, seq, item, out, false);
  }

  /** After a reconnection the seq jumped: a gap in the same life, or a new life that passed the old seq. */
  #reconnectJump(next: bigint, seq: bigint, item: T, out: SequencerAction<T>[]): void {
    const last = this.#last;
    this.#catchUp = null;
    if (this.#options.replay && this.#options.same !== undefined && last !== null) {
      this.#pending = openPending({ last, base: next, early: [] }, false);
      this.#pending.held.push({ seq, item });
      out.push({ type: 'replay', fromSeq: 0n });
      return;
    }
    this.#newLife(seq, item, 'reconnect-unverifiable', out);
  }

  #startAt(seq: bigint, item: T, out: SequencerAction<T>[], history: boolean): void {
    if (seq === 0n) {
      this.#next = 1n;
      this.#deliver(seq, item, false, out);
      return;
    }
    this.#gap(0n, seq, item, out, history);
  }

  #gap(from: bigint, seq: bigint, item: T, out: SequencerAction<T>[], history: boolean): void {
    this.#catchUp = null;
    if (this.#options.replay) {
      this.#pending = holePending(from, seq, [{ seq, item }], { history, inherited: false });
      out.push({ type: 'replay', fromSeq: from });
      // the held batch is delivered when the replay ends
      return;
    }
    out.push({ type: 'gap', lost: count(seq - from), filled: 0, history });
    this.#next = seq + 1n;
    this.#deliver(seq, item, false, out);
  }
}
