import { describe, expect, it } from 'vitest';
import { StreamSequencer, type SequencerAction } from './stream-sequencer.js';

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
    expect(s.replayed(3n, 'd (replayed)')).toEqual([]); // held already
    const end = s.replayEnded();
    expect(end[0]).toEqual({ type: 'gap', lost: 0, filled: 2, history: false });
    expect(delivered(end)).toEqual(['d', 'e']);
    expect(s.expected).toBe(5n);
  });

  it('counts what the replay buffer no longer had as lost', () => {
    const s = new StreamSequencer<string>({ replay: true, maxHeld: 10 });
    s.live(0n, 'a');
    s.live(10n, 'k');
    s.replayed(7n, 'h'); // 1..6 evicted from the publisher's buffer
    s.replayed(9n, 'j'); // 8 never published (queue full)
    expect(s.replayEnded()[0]).toEqual({ type: 'gap', lost: 7, filled: 2, history: false });
  });

  it('treats a seq below the last as a publisher restart and replays the new life from 0', () => {
    const s = new StreamSequencer<string>({ replay: true, maxHeld: 10 });
    s.live(0n, 'a');
    s.live(1n, 'b');
    s.live(2n, 'c');
    expect(s.live(1n, 'new-b')).toEqual([
      { type: 'reset', fromSeq: 2n, toSeq: 1n },
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
});
