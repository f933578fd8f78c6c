import { describe, expect, it } from 'vitest';
import { MessageQueue, type QueuedEntry } from './message-queue.js';

/** A message of `n` frames, each a view of `chunk` holding its own label. */
function message(chunk: Buffer, at: { offset: number }, label: number, n: number): Uint8Array[] {
  const frames: Uint8Array[] = [];
  for (let f = 0; f < n; f++) {
    const text = `${label}.${f}`;
    chunk.write(text, at.offset, 'latin1');
    frames.push(chunk.subarray(at.offset, at.offset + text.length));
    at.offset += text.length;
  }
  return frames;
}

const text = (entry: QueuedEntry | undefined): string[] | string =>
  entry === undefined
    ? 'empty'
    : typeof entry === 'function'
      ? 'call'
      : entry.map((f) => Buffer.from(f.buffer, f.byteOffset, f.length).toString('latin1'));

describe('MessageQueue', () => {
  it('hands back messages and calls in the order they came, across segments, each frame its own bytes', () => {
    const q = new MessageQueue();
    const expected: (string[] | string)[] = [];
    let chunk = Buffer.alloc(1 << 20);
    const at = { offset: 0 };
    // 3,000 entries (segments hold 1,024) with 1 to 16 frames (they hold 4,096 frames), a new chunk now and then
    for (let i = 0; i < 3_000; i++) {
      if (i % 7 === 3) {
        q.pushCall(() => undefined);
        expected.push('call');
        continue;
      }
      if (i % 500 === 0) {
        chunk = Buffer.alloc(1 << 20);
        at.offset = 0;
      }
      const frames = message(chunk, at, i, 1 + (i % 16));
      q.pushMessage(frames);
      expected.push(frames.map((f) => Buffer.from(f).toString('latin1')));
    }
    expect(q.length).toBe(3_000);
    const got: (string[] | string)[] = [];
    for (;;) {
      const e = q.shift();
      if (e === undefined) break;
      got.push(text(e));
    }
    expect(got).toEqual(expected);
    expect(q.length).toBe(0);
  });

  it('keeps a frame as a view of the chunk it came in, not a copy', () => {
    const q = new MessageQueue();
    const chunk = Buffer.from('topicseq.payload', 'latin1');
    q.pushMessage([chunk.subarray(0, 5), chunk.subarray(5, 8), chunk.subarray(8)]);
    const frames = q.shift() as Uint8Array[];
    expect(frames.map((f) => f.buffer === chunk.buffer)).toEqual([true, true, true]);
    expect(frames.map((f) => [f.byteOffset - chunk.byteOffset, f.length])).toEqual([
      [0, 5],
      [5, 3],
      [8, 8],
    ]);
  });

  it('runs empty and fills again, interleaved as a subscriber that keeps up uses it; clear drops everything', () => {
    const q = new MessageQueue();
    const chunk = Buffer.alloc(1 << 16);
    const at = { offset: 0 };
    for (let round = 0; round < 2_000; round++) {
      at.offset = 0;
      q.pushMessage(message(chunk, at, round, 3));
      q.pushMessage(message(chunk, at, round + 1, 2));
      expect(text(q.shift())).toEqual([`${round}.0`, `${round}.1`, `${round}.2`]);
      expect(text(q.shift())).toEqual([`${round + 1}.0`, `${round + 1}.1`]);
      expect(q.shift()).toBeUndefined();
    }
    q.pushMessage(message(chunk, at, 9, 1));
    q.pushCall(() => undefined);
    q.clear();
    expect(q.length).toBe(0);
    expect(q.shift()).toBeUndefined();
    q.pushCall(() => undefined);
    expect(text(q.shift())).toBe('call');
  });

  it('refuses a message of more frames than an entry can count', () => {
    expect(() => new MessageQueue().pushMessage(new Array<Uint8Array>(255).fill(new Uint8Array(1)))).toThrow(
      /at most 254 frames/,
    );
  });
});
