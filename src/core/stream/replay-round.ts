// One replay in flight, as the StreamSequencer keeps it: the gap it fills (or, open, the whole buffer it asked for),
// what it brought so far, the live batches held behind it, and how its rounds went. Data and constructors only: the
// sequencer decides what each reply and live batch does to it.

const U64_END = 1n << 64n;

export interface Seen<T> {
  readonly seq: bigint;
  readonly item: T;
}

/** After a reconnection: is the publisher still the life this rank followed? */
export interface Verify<T> {
  /** the last batch delivered before the reconnection */
  readonly last: Seen<T>;
  /** the seq expected before the reconnection */
  readonly base: bigint;
  /** replies below `last.seq`: the new life's history, if it is one */
  readonly early: Seen<T>[];
}

export interface Pending<T> {
  /** exclusive: the live seq that revealed the gap (held) */
  readonly to: bigint;
  next: bigint;
  filled: number;
  lost: number;
  /** history before the first batch heard: a missing part is not counted as lost */
  history: boolean;
  /** a request for the whole buffer (before any batch was heard, or to verify a life): no end is known */
  readonly open: boolean;
  /** the first seq an open request brought */
  first: bigint | null;
  /** the batches before the first reply are lost (a gap, a new life's start), not merely unheard */
  countStart: boolean;
  verify: Verify<T> | null;
  readonly held: Seen<T>[];
  /** requests made for this gap so far */
  rounds: number;
  /** the current round brought a reply */
  roundStarted: boolean;
  /** the current round's replies skipped a seq after its first one: dropped on the way, the rest is ignored */
  torn: boolean;
  /**
   * the hole came after the gap the round was asked for: an answer that ends before reaching it was the buffer as it
   * stood at the request, which the hole's batches joined later
   */
  inherited: boolean;
}

export function count(n: bigint): number {
  return n > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(n);
}

/** A gap [from, to) asked for (or, inherited, one the round in flight goes on into), `held` from the batch at `to`. */
export function holePending<T>(
  from: bigint,
  to: bigint,
  held: Seen<T>[],
  o: { readonly history: boolean; readonly inherited: boolean },
): Pending<T> {
  return {
    to,
    next: from,
    filled: 0,
    lost: 0,
    history: o.history,
    open: false,
    first: null,
    countStart: true,
    verify: null,
    held,
    rounds: 1,
    roundStarted: o.inherited,
    torn: false,
    inherited: o.inherited,
  };
}

/** A request for the publisher's whole buffer (the history before the first batch, or a life to verify). */
export function openPending<T>(verify: Verify<T> | null, history: boolean): Pending<T> {
  return {
    to: U64_END,
    next: 0n,
    filled: 0,
    lost: 0,
    history,
    open: true,
    first: null,
    countStart: false,
    verify,
    held: [],
    rounds: 1,
    roundStarted: false,
    torn: false,
    inherited: false,
  };
}
