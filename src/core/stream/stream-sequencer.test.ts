import { describe, expect, it } from 'vitest';
import { MAX_REPLAY_ROUNDS, StreamSequencer, type SequencerAction } from './stream-sequencer.js';

const delivered = (actions: readonly SequencerAction<string>[]): string[] =>
  actions.flatMap((a) => (a.type === 'deliver' ? [a.item] : []));

describe('StreamSequencer', () => {
  it('delivers consecutive seqs and counts a jump as a gap without replay', () => {
    const s = new StreamSequencer<string>({ replay: false, maxHeld: 10 });
    expect(delivered(s.live(0n, 'a'))).toEqual(['a']);
    expect(delivered(s.live(1n, 'b'))).toEqual(['b']);
    const jump = s.live(5n, 'f');
    expect(jump).toEqual([
      { type: 'gap', lost: 3, filled: 0, history: false },
      { type: 'deliver', seq: 5n, item: 'f', replayed: false },
    ]);
    expect(s.expected).toBe(6n);
    expect(s.live(5n, 'f again')).toEqual([]); // the same batch twice
  });

  it('holds later batches while a replay fills the gap, then delivers everything in seq order', () => {
    const s = new StreamSequencer<string>({ replay: true, maxHeld: 10 });
    s.live(0n, 'a');
    expect(s.live(3n, 'd')).toEqual([{ type: 'replay', fromSeq: 1n }]);
    expect(s.live(4n, 'e')).toEqual([]);
    expect(s.replayed(0n, 'old')).toEqual([]); // before the gap: a duplicate
    expect(delivered(s.replayed(1n, 'b'))).toEqual(['b']);
    expect(delivered(s.replayed(2n, 'c'))).toEqual(['c']);
    // held already: the first reply past the gap ends the round (replies come in seq order), no end marker needed
    const end = s.replayed(3n, 'd (replayed)');
    expect(end[0]).toEqual({ type: 'gap', lost: 0, filled: 2, history: false });
    expect(delivered(end)).toEqual(['d', 'e']);
    expect(s.expected).toBe(5n);
    expect(s.replaying).toBe(false);
    expect(s.replayEnded()).toEqual([]); // the end marker that follows
  });

  it('fills every hole among the held batches from one answer, with no request of their own', () => {
    const s = new StreamSequencer<string>({ replay: true, maxHeld: 20 });
    s.live(0n, 'a');
    expect(s.live(3n, 'd')).toEqual([{ type: 'replay', fromSeq: 1n }]);
    // held meanwhile, with holes at 5 and 8..9 (the socket dropped them too)
    for (const [seq, item] of [
      [4n, 'e'],
      [6n, 'g'],
      [7n, 'h'],
      [10n, 'k'],
    ] as const)
      expect(s.live(seq, item)).toEqual([]);
    // vLLM answers with its whole buffer from 1
    const answer = ['b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k'].flatMap((item, i) =>
      s.replayed(BigInt(i + 1), item),
    );
    expect(answer.filter((a) => a.type === 'replay')).toEqual([]);
    expect(delivered(answer)).toEqual(['b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k']);
    expect(answer.filter((a) => a.type === 'gap')).toEqual([
      { type: 'gap', lost: 0, filled: 2, history: false },
      { type: 'gap', lost: 0, filled: 1, history: false },
      { type: 'gap', lost: 0, filled: 2, history: false },
    ]);
    expect(s.replaying).toBe(false);
    expect(s.expected).toBe(11n);
  });

  it("asks again for a later hole whose replies the answer lost on the way, from that hole's start", () => {
    const s = new StreamSequencer<string>({ replay: true, maxHeld: 20 });
    s.live(0n, 'a');
    s.live(2n, 'c');
    s.live(3n, 'd');
    s.live(6n, 'g');
    // 1 comes; 4 and 5 were dropped by the ROUTER, 6 arrives: the round for the hole at 4 is torn
    const first = [...s.replayed(1n, 'b'), ...s.replayed(2n, 'c'), ...s.replayed(3n, 'd'), ...s.replayed(6n, 'g')];
    expect(delivered(first)).toEqual(['b', 'c', 'd']);
    // the first reply past the hole ends the round, and the hole is asked for again (the old round's socket closes)
    expect(first.filter((a) => a.type === 'replay')).toEqual([{ type: 'replay', fromSeq: 4n }]);
    expect(s.replaying).toBe(true);
    const second = [...s.replayed(4n, 'e'), ...s.replayed(5n, 'f'), ...s.replayed(6n, 'g')];
    expect(delivered(second)).toEqual(['e', 'f', 'g']);
    expect(second.find((a) => a.type === 'gap')).toEqual({ type: 'gap', lost: 0, filled: 2, history: false });
    expect(s.replaying).toBe(false);
  });

  it('asks for a later hole the answer ended before (its batches joined the buffer after the request)', () => {
    const s = new StreamSequencer<string>({ replay: true, maxHeld: 20 });
    s.live(0n, 'a');
    s.live(2n, 'c');
    s.live(4n, 'e');
    // the buffer as it stood at the request ended at 2, then its end marker
    const first = [...s.replayed(1n, 'b'), ...s.replayed(2n, 'c')];
    expect(delivered(first)).toEqual(['b', 'c']);
    expect(s.replayEnded()).toEqual([{ type: 'replay', fromSeq: 3n }]);
    const second = [...s.replayed(3n, 'd'), ...s.replayed(4n, 'e')];
    expect(delivered(second)).toEqual(['d', 'e']);
    expect(second.find((a) => a.type === 'gap')).toEqual({ type: 'gap', lost: 0, filled: 1, history: false });
  });

  it('counts what the replay buffer no longer had as lost', () => {
    const s = new StreamSequencer<string>({ replay: true, maxHeld: 10 });
    s.live(0n, 'a');
    s.live(10n, 'k');
    s.replayed(7n, 'h'); // 1..6 evicted from the publisher's buffer
    s.replayed(9n, 'j'); // 8 skipped: dropped on the way, or never buffered (its send failed)
    expect(s.replayEnded()).toEqual([{ type: 'replay', fromSeq: 8n }]);
    s.replayed(9n, 'j'); // the buffer has no 8: it was never buffered
    expect(s.replayEnded()[0]).toEqual({ type: 'gap', lost: 7, filled: 2, history: false });
  });

  it('asks again from the first reply a round skipped (dropped on the way), and delivers in seq order', () => {
    const s = new StreamSequencer<string>({ replay: true, maxHeld: 10 });
    s.live(0n, 'a');
    expect(s.live(6n, 'g')).toEqual([{ type: 'replay', fromSeq: 1n }]);
    // the first round: 1, 2 arrive, the ROUTER drops 3 and 4, then 5 and the end marker get through
    const first = [...s.replayed(1n, 'b'), ...s.replayed(2n, 'c'), ...s.replayed(5n, 'f')];
    expect(delivered(first)).toEqual(['b', 'c']);
    expect(s.replayEnded()).toEqual([{ type: 'replay', fromSeq: 3n }]);
    expect(s.replaying).toBe(true);
    const second = [...s.replayed(3n, 'd'), ...s.replayed(4n, 'e'), ...s.replayed(5n, 'f'), ...s.replayEnded()];
    expect(delivered(second)).toEqual(['d', 'e', 'f', 'g']);
    expect(second.find((a) => a.type === 'gap')).toEqual({ type: 'gap', lost: 0, filled: 5, history: false });
    expect(s.expected).toBe(7n);
  });

  it('a reply past the gap after a begun round ends it; what the round still lacked is asked again', () => {
    const s = new StreamSequencer<string>({ replay: true, maxHeld: 10 });
    s.live(0n, 'a');
    s.live(4n, 'e');
    s.replayed(1n, 'b');
    // 2 and 3 were dropped on the way: the next reply is past the gap
    expect(s.replayed(5n, 'f')).toEqual([{ type: 'replay', fromSeq: 2n }]);
    const second = [...s.replayed(2n, 'c'), ...s.replayed(3n, 'd'), ...s.replayed(4n, 'e')];
    expect(delivered(second)).toEqual(['c', 'd', 'e']);
    expect(second.find((a) => a.type === 'gap')).toEqual({ type: 'gap', lost: 0, filled: 3, history: false });
  });

  it('a torn replay holding more than maxHeld live batches is abandoned, not asked again', () => {
    const s = new StreamSequencer<string>({ replay: true, maxHeld: 2 });
    s.live(0n, 'a');
    s.live(5n, 'f');
    s.replayed(1n, 'b');
    s.replayed(3n, 'd'); // torn
    s.live(6n, 'g');
    const out = s.live(7n, 'h');
    expect(out.some((a) => a.type === 'replay')).toBe(false);
    expect(out[0]).toEqual({ type: 'gap', lost: 3, filled: 1, history: false });
    expect(delivered(out)).toEqual(['f', 'g', 'h']);
    expect(s.replaying).toBe(false);
  });

  it(`counts as lost what is still missing after ${MAX_REPLAY_ROUNDS} torn rounds`, () => {
    const s = new StreamSequencer<string>({ replay: true, maxHeld: 10_000 });
    s.live(0n, 'a');
    s.live(1_000n, 'z');
    let from = 1n;
    for (let round = 1; round <= MAX_REPLAY_ROUNDS; round++) {
      // each round: one reply gets through, the next is dropped
      s.replayed(from, `r${from}`);
      s.replayed(from + 2n, 'after a drop');
      const end = s.replayEnded();
      if (round < MAX_REPLAY_ROUNDS) expect(end).toEqual([{ type: 'replay', fromSeq: ++from }]);
      else
        expect(end[0]).toEqual({
          type: 'gap',
          lost: 999 - MAX_REPLAY_ROUNDS,
          filled: MAX_REPLAY_ROUNDS,
          history: false,
        });
    }
    expect(s.replaying).toBe(false);
  });

  it('treats a seq below the last as a publisher restart and replays the new life from 0', () => {
    const s = new StreamSequencer<string>({ replay: true, maxHeld: 10 });
    s.live(0n, 'a');
    s.live(1n, 'b');
    s.live(2n, 'c');
    expect(s.live(1n, 'new-b')).toEqual([
      { type: 'reset', fromSeq: 2n, toSeq: 1n, cause: 'seq-back' },
      { type: 'replay', fromSeq: 0n },
    ]);
    const end = [...s.replayed(0n, 'new-a'), ...s.replayEnded()];
    expect(delivered(end)).toEqual(['new-a', 'new-b']);
    expect(end.find((a) => a.type === 'gap')).toEqual({ type: 'gap', lost: 0, filled: 1, history: false });
  });

  it('asks for the history before the first batch heard and does not call its absence a loss', () => {
    const s = new StreamSequencer<string>({ replay: true, maxHeld: 10 });
    expect(s.live(100n, 'x')).toEqual([{ type: 'replay', fromSeq: 0n }]);
    const end = s.replayEnded();
    expect(end[0]).toEqual({ type: 'gap', lost: 100, filled: 0, history: true });
    expect(delivered(end)).toEqual(['x']);
  });

  it('abandons a replay when too many live batches are held', () => {
    const s = new StreamSequencer<string>({ replay: true, maxHeld: 2 });
    s.live(0n, 'a');
    s.live(5n, 'f');
    s.live(6n, 'g');
    const out = s.live(7n, 'h');
    expect(out[0]).toEqual({ type: 'gap', lost: 4, filled: 0, history: false });
    expect(delivered(out)).toEqual(['f', 'g', 'h']);
    expect(s.replaying).toBe(false);
  });

  it('asks for the whole buffer right after subscribing, before any batch is heard', () => {
    const s = new StreamSequencer<string>({ replay: true, maxHeld: 10 });
    expect(s.history()).toEqual([{ type: 'replay', fromSeq: 0n }]);
    expect(s.history()).toEqual([]); // one at a time
    expect(s.live(2n, 'c live')).toEqual([]); // held
    const out = [...s.replayed(0n, 'a'), ...s.replayed(1n, 'b'), ...s.replayed(2n, 'c'), ...s.replayEnded()];
    expect(delivered(out)).toEqual(['a', 'b', 'c']); // the held copy of c is dropped
    expect(out.find((a) => a.type === 'gap')).toEqual({ type: 'gap', lost: 0, filled: 3, history: true });
    expect(s.expected).toBe(3n);
    const empty = new StreamSequencer<string>({ replay: true, maxHeld: 10 });
    empty.history();
    expect(empty.replayEnded()).toEqual([]);
    expect(empty.expected).toBeNull();
    expect(new StreamSequencer<string>({ replay: false, maxHeld: 10 }).history()).toEqual([]);
  });

  it('counts the history a late subscriber cannot replay: everything before the oldest buffered batch', () => {
    const s = new StreamSequencer<string>({ replay: true, maxHeld: 10 });
    s.history();
    const out = [...s.replayed(20n, 'u'), ...s.replayed(21n, 'v'), ...s.replayEnded()];
    expect(out.find((a) => a.type === 'gap')).toEqual({ type: 'gap', lost: 20, filled: 2, history: true });
    expect(s.expected).toBe(22n);
  });

  describe('after a reconnection', () => {
    const same = (a: string, b: string): boolean => a === b;
    const followed = (): StreamSequencer<string> => {
      const s = new StreamSequencer<string>({ replay: true, maxHeld: 10, same });
      s.live(0n, 'a');
      s.live(1n, 'b');
      s.reconnected();
      return s;
    };

    it('the same life: its buffer still holds the last batch delivered, so the jump is a gap it fills', () => {
      const s = followed();
      expect(s.live(4n, 'e')).toEqual([{ type: 'replay', fromSeq: 0n }]);
      const out = [
        ...s.replayed(0n, 'a'),
        ...s.replayed(1n, 'b'),
        ...s.replayed(2n, 'c'),
        ...s.replayed(3n, 'd'),
        ...s.replayed(4n, 'e'),
        ...s.replayEnded(),
      ];
      expect(out.some((a) => a.type === 'reset')).toBe(false);
      expect(delivered(out)).toEqual(['c', 'd', 'e']);
      expect(out.find((a) => a.type === 'gap')).toEqual({ type: 'gap', lost: 0, filled: 3, history: false });
      expect(s.expected).toBe(5n);
    });

    it('a new life: the batch at the last seq differs, so the rank resets and the new buffer is its start', () => {
      const s = followed();
      s.live(6n, 'new-g');
      const out = [
        ...s.replayed(0n, 'new-a'),
        ...s.replayed(1n, 'new-b'),
        ...s.replayed(2n, 'new-c'),
        ...s.replayEnded(),
      ];
      expect(out[0]).toMatchObject({ type: 'reset', cause: 'reconnect-replay-differs' });
      expect(delivered(out)).toEqual(['new-a', 'new-b', 'new-c']);
      // 3..5 of the new life are not in its buffer: asked for once more, then lost (not history)
      expect(out.at(-1)).toEqual({ type: 'replay', fromSeq: 3n });
      const rest = s.replayEnded();
      expect(rest[0]).toEqual({ type: 'gap', lost: 3, filled: 0, history: false });
      expect(delivered(rest)).toEqual(['new-g']);
    });

    it('a buffer that no longer reaches the last batch seen is a new life too; its missing start is lost', () => {
      const s = followed();
      s.live(30n, 'x');
      const out = [...s.replayed(25n, 'w'), ...s.replayed(26n, 'x'), ...s.replayEnded()];
      expect(out[0]).toMatchObject({ type: 'reset', cause: 'reconnect-replay-differs' });
      expect(out.find((a) => a.type === 'gap')).toEqual({ type: 'gap', lost: 25, filled: 2, history: false });
    });

    it('without replay the jump is presumed a new life; the next seq is the same life going on', () => {
      const s = new StreamSequencer<string>({ replay: false, maxHeld: 10, same });
      s.live(0n, 'a');
      s.reconnected();
      expect(s.live(1n, 'b')).toEqual([{ type: 'deliver', seq: 1n, item: 'b', replayed: false }]);
      s.reconnected();
      const out = s.live(9n, 'new');
      expect(out[0]).toMatchObject({ type: 'reset', cause: 'reconnect-unverifiable' });
      expect(out[1]).toEqual({ type: 'gap', lost: 9, filled: 0, history: false });
    });

    it('holds at most maxHeld replies while verifying; a new life counts the dropped ones lost', () => {
      const s = new StreamSequencer<string>({ replay: true, maxHeld: 2, same });
      for (let i = 0n; i < 6n; i++) s.live(i, `old-${i}`);
      s.reconnected();
      s.live(9n, 'new-9');
      const out = [0n, 1n, 2n, 3n, 4n, 5n].flatMap((i) => s.replayed(i, `new-${i}`));
      expect(out[0]).toMatchObject({ type: 'reset' });
      expect(delivered(out)).toEqual(['new-3', 'new-4', 'new-5']);
      expect(s.replayEnded().find((a) => a.type === 'gap')).toMatchObject({ lost: 3, filled: 3 });
    });

    it('a publisher id that did not change settles it without a replay', () => {
      const s = followed();
      s.sameLife();
      expect(s.live(4n, 'e')).toEqual([{ type: 'replay', fromSeq: 2n }]);
    });
  });

  describe('a live stream behind the replay (its TCP window closed while the sidecar stalled)', () => {
    /** 0 delivered, 3 revealed the gap 1..2, the replay filled it and its answer reached 3: caught up to 4 */
    const filled = (): StreamSequencer<string> => {
      const s = new StreamSequencer<string>({ replay: true, maxHeld: 10 });
      s.live(0n, 'a');
      s.live(3n, 'd');
      s.replayed(1n, 'b');
      s.replayed(2n, 'c');
      expect(delivered(s.replayed(3n, 'd (replayed)'))).toEqual(['d']);
      return s;
    };

    it('delivers the answer past the gap as it comes, and the live copies that follow are nothing new', () => {
      const s = filled();
      expect(s.readingReplay).toBe(true);
      expect(s.skipsReply(3n)).toBe(true);
      expect(s.skipsReply(4n)).toBe(false);
      expect(s.replayed(4n, 'e')).toEqual([{ type: 'deliver', seq: 4n, item: 'e', replayed: true }]);
      expect(delivered(s.replayed(5n, 'f'))).toEqual(['f']);
      // the live stream resumes with what the replay brought (some of it dropped on its way: no loss, no new life)
      expect(s.live(4n, 'e (live)')).toEqual([]);
      expect(s.live(6n, 'g')).toEqual([{ type: 'deliver', seq: 6n, item: 'g', replayed: false }]);
      expect(s.replayed(6n, 'g (replayed)')).toEqual([]);
      expect(s.replayEnded()).toEqual([]);
      expect(s.readingReplay).toBe(false);
    });

    it('asks again from a reply dropped on the way while rounds bring something, then leaves it to the live stream', () => {
      const s = filled();
      s.replayed(4n, 'e');
      expect(s.replayed(6n, 'g')).toEqual([{ type: 'replay', fromSeq: 5n }]);
      expect(s.readingReplay).toBe(true);
      // the next round brings nothing new before its own skip: no third request
      expect(s.replayed(7n, 'h')).toEqual([]);
      expect(s.readingReplay).toBe(false);
      expect(s.live(5n, 'f')).toEqual([{ type: 'deliver', seq: 5n, item: 'f', replayed: false }]);
    });

    it('a restart still shows: a seq below anything the live stream brought is a new life', () => {
      const s = filled();
      s.replayed(4n, 'e');
      s.replayed(5n, 'f');
      expect(s.live(0n, 'new')[0]).toEqual({ type: 'reset', fromSeq: 5n, toSeq: 0n, cause: 'seq-back' });
      expect(s.readingReplay).toBe(false);
    });

    it('catchUp() after a stall asks from the next seq, delivers what the buffer holds, and ends at its end marker', () => {
      const s = new StreamSequencer<string>({ replay: true, maxHeld: 10 });
      expect(s.catchUp()).toEqual([]); // nothing heard yet: the history request covers it
      s.live(0n, 'a');
      expect(s.catchUp()).toEqual([{ type: 'replay', fromSeq: 1n }]);
      expect(s.catchUp()).toEqual([]); // one at a time
      expect(delivered(s.replayed(1n, 'b'))).toEqual(['b']);
      expect(s.replayEnded()).toEqual([]);
      expect(s.readingReplay).toBe(false);
      expect(s.live(1n, 'b (live)')).toEqual([]);
      expect(delivered(s.live(2n, 'c'))).toEqual(['c']);
      // a round's first reply past the next seq: the buffer no longer holds it, and the live stream will show the gap
      s.catchUp();
      expect(s.replayed(5n, 'f')).toEqual([]);
      expect(s.readingReplay).toBe(false);
      expect(s.live(5n, 'f')).toEqual([{ type: 'replay', fromSeq: 3n }]);
    });

    it('a live batch past the replay starts a gap of its own, and the answer in flight is no longer read', () => {
      const s = filled();
      s.replayed(4n, 'e');
      expect(s.live(9n, 'j')).toEqual([{ type: 'replay', fromSeq: 5n }]);
      expect(s.skipsReply(4n)).toBe(true);
    });
  });

  it('restart(): a changed publisher id starts a new life even when the seq went on', () => {
    const s = new StreamSequencer<string>({ replay: false, maxHeld: 10 });
    s.live(0n, 'a');
    s.live(1n, 'b');
    const out = s.restart(2n, 'new');
    expect(out[0]).toEqual({ type: 'reset', fromSeq: 1n, toSeq: 2n, cause: 'publisher-id' });
    expect(out[1]).toEqual({ type: 'gap', lost: 2, filled: 0, history: false });
    expect(delivered(out)).toEqual(['new']);
  });
});
