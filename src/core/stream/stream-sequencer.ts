// Orders one rank's stream by its batch seq (u64, from 0 per publisher life) and decides what each arrival means:
// the next batch (deliver), a jump (a gap: batches lost to a full publisher queue, a failed send, or this
// subscriber's receive high-water mark), or a seq below the last (the publisher restarted: reset the rank's tables).
// With a replay endpoint a gap is filled before anything later is delivered: later live batches are held (bounded)
// until the replay ends, so removals never overtake the stores they undo. The first batch heard, and the first of a
// new life, also ask for the history before it (what the publisher still buffers); history nobody could replay is
// not a loss — kvsentinel simply was not listening — except after a restart, where it is the new life's start.
// Pure: the socket code executes the returned actions.

export type SequencerAction<T> =
  | { readonly type: 'deliver'; readonly seq: bigint; readonly item: T; readonly replayed: boolean }
  | { readonly type: 'replay'; readonly fromSeq: bigint }
  /** batches that will never arrive: `filled` of the missing ones did arrive by replay */
  | { readonly type: 'gap'; readonly lost: number; readonly filled: number; readonly history: boolean }
  | { readonly type: 'reset'; readonly fromSeq: bigint; readonly toSeq: bigint };

interface Pending<T> {
  readonly from: bigint;
  /** exclusive: the live seq that revealed the gap (held) */
  readonly to: bigint;
  next: bigint;
  filled: number;
  lost: number;
  /** history before the first batch heard: a missing part is not counted as lost */
  readonly history: boolean;
  /** a history request made before any batch was heard: every replayed seq from `next` on is taken */
  readonly open: boolean;
  readonly held: { seq: bigint; item: T }[];
}

export interface SequencerOptions {
  readonly replay: boolean;
  /** live batches held while a replay runs; past it the replay is abandoned (its missing batches count as lost) */
  readonly maxHeld: number;
}

const U64_END = 1n << 64n;

function count(n: bigint): number {
  return n > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(n);
}

export class StreamSequencer<T> {
  readonly #options: SequencerOptions;
  #next: bigint | null = null;
  #pending: Pending<T> | null = null;
  #lives = 0;

  constructor(options: SequencerOptions) {
    this.#options = options;
  }

  /** the next seq expected, null before the first batch */
  get expected(): bigint | null {
    return this.#next;
  }

  get replaying(): boolean {
    return this.#pending !== null;
  }

  /**
   * Before any batch was heard (just subscribed): ask for everything the publisher still buffers. A subscription
   * takes effect a moment after the connection, and a rank that publishes rarely may never show a later batch that
   * would reveal what was missed.
   */
  history(): SequencerAction<T>[] {
    if (!this.#options.replay || this.#next !== null || this.#pending !== null) return [];
    this.#pending = { from: 0n, to: U64_END, next: 0n, filled: 0, lost: 0, history: true, open: true, held: [] };
    return [{ type: 'replay', fromSeq: 0n }];
  }

  /** A live batch arrived. */
  live(seq: bigint, item: T): SequencerAction<T>[] {
    const out: SequencerAction<T>[] = [];
    this.#live(seq, item, out);
    return out;
  }

  /** A replayed batch arrived (outside a replay, or outside its range, it is a duplicate and ignored). */
  replayed(seq: bigint, item: T): SequencerAction<T>[] {
    const p = this.#pending;
    if (p === null || seq < p.next || seq >= p.to) return [];
    const out: SequencerAction<T>[] = [];
    // the publisher's buffer no longer holds what it skipped
    if (seq > p.next) p.lost += count(seq - p.next);
    p.filled++;
    p.next = seq + 1n;
    out.push({ type: 'deliver', seq, item, replayed: true });
    return out;
  }

  /** The replay ended (its end marker, a timeout, or the socket failed): count what it did not bring, go on. */
  replayEnded(): SequencerAction<T>[] {
    const p = this.#pending;
    if (p === null) return [];
    this.#pending = null;
    const out: SequencerAction<T>[] = [];
    if (p.open) {
      // nothing is known to be missing; live batches the replay already brought are dropped
      if (p.filled > 0) out.push({ type: 'gap', lost: 0, filled: p.filled, history: true });
      this.#next = p.filled > 0 ? p.next : null;
      for (const h of p.held) if (this.#next === null || h.seq >= this.#next) this.#live(h.seq, h.item, out);
      return out;
    }
    p.lost += count(p.to - p.next);
    if (p.lost > 0 || p.filled > 0) out.push({ type: 'gap', lost: p.lost, filled: p.filled, history: p.history });
    this.#next = p.to;
    for (const h of p.held) this.#live(h.seq, h.item, out);
    return out;
  }

  #live(seq: bigint, item: T, out: SequencerAction<T>[]): void {
    const p = this.#pending;
    if (p !== null) {
      p.held.push({ seq, item });
      if (p.held.length > this.#options.maxHeld) out.push(...this.replayEnded());
      return;
    }
    const next = this.#next;
    if (next === null || seq < next - 1n || (seq === next - 1n && this.#lives > 0 && seq === 0n)) {
      if (next !== null) out.push({ type: 'reset', fromSeq: next - 1n, toSeq: seq });
      this.#lives++;
      // a first batch above 0: the history before it (the start of a new life after a restart is a real loss)
      this.#startAt(seq, item, out, next === null);
      return;
    }
    if (seq === next) {
      this.#next = seq + 1n;
      out.push({ type: 'deliver', seq, item, replayed: false });
      return;
    }
    if (seq < next) return; // the last batch again
    this.#gap(next, seq, item, out, false);
  }

  #startAt(seq: bigint, item: T, out: SequencerAction<T>[], history: boolean): void {
    if (seq === 0n) {
      this.#next = 1n;
      out.push({ type: 'deliver', seq, item, replayed: false });
      return;
    }
    this.#gap(0n, seq, item, out, history);
  }

  #gap(from: bigint, seq: bigint, item: T, out: SequencerAction<T>[], history: boolean): void {
    if (this.#options.replay) {
      this.#pending = { from, to: seq, next: from, filled: 0, lost: 0, history, open: false, held: [{ seq, item }] };
      out.push({ type: 'replay', fromSeq: from });
      // the held batch is delivered when the replay ends
      return;
    }
    out.push({ type: 'gap', lost: count(seq - from), filled: 0, history });
    this.#next = seq + 1n;
    out.push({ type: 'deliver', seq, item, replayed: false });
  }
}
