// The prompt id ring on one thread: the writer and the reader share its memory as the scan thread and the event loop
// do; each answer's buffer object is a structuredClone of the ring's SharedArrayBuffer (a new object over the same
// memory, as each message of the thread brings one). Finalization is driven through release() where the order
// matters, and through real collections (gc exposed at runtime) for the registry's wiring.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  createPromptIdRingMemory,
  PromptIdRingReader,
  PromptIdRingWriter,
  type PromptIdRingMemory,
} from './prompt-id-ring.js';

const ids = (n: number, seed: number): Uint32Array =>
  Uint32Array.from({ length: n }, (_, i) => (i * 7919 + seed) >>> 0);
const released = (memory: PromptIdRingMemory): number => Number(Atomics.load(new BigInt64Array(memory.released), 0));

function ring(slots: number): {
  memory: PromptIdRingMemory;
  writer: PromptIdRingWriter;
  reader: PromptIdRingReader;
  answer: () => SharedArrayBuffer;
} {
  const memory = createPromptIdRingMemory(slots);
  return {
    memory,
    writer: new PromptIdRingWriter(memory),
    reader: new PromptIdRingReader(memory),
    answer: () => structuredClone(memory.ids),
  };
}

describe('prompt id ring', () => {
  it('places ids contiguously one after another, read back exactly through views of an answer', () => {
    const { writer, reader, answer } = ring(100);
    const a = ids(30, 1);
    const b = ids(50, 2);
    const atA = writer.place(a);
    const atB = writer.place(b);
    expect(atA).toEqual({ start: 0, length: 30 });
    expect(atB).toEqual({ start: 30, length: 50 });
    const buffer = answer();
    expect([...reader.view(buffer, atA!)]).toEqual([...a]);
    expect([...reader.view(buffer, atB!)]).toEqual([...b]);
    // two views of one answer: one buffer object, one entry to release
    expect(reader.held).toBe(1);
  });

  it('skips a tail too short for the next prompt, wrapping to the ring start, and releases the tail with it', () => {
    const { memory, writer, reader, answer } = ring(100);
    const first = writer.place(ids(60, 1))!;
    reader.view(answer(), first);
    reader.release(0);
    expect(released(memory)).toBe(60);
    // 40 slots left before the end: 50 ids go to the start (position 100 = slot 0)
    const wrapped = ids(50, 2);
    const at = writer.place(wrapped)!;
    expect(at).toEqual({ start: 100, length: 50 });
    const view = reader.view(answer(), at);
    expect(view.byteOffset).toBe(0);
    expect([...view]).toEqual([...wrapped]);
    // the skipped tail is free once the prompt after it is released: 100 slots again
    reader.release(1);
    expect(released(memory)).toBe(150);
    expect(writer.place(ids(100, 3))).toEqual({ start: 200, length: 100 });
  });

  it('refuses ids that do not fit in the released room (the caller sends them itself), never overwriting held ids', () => {
    const { writer, reader, answer } = ring(100);
    const kept = ids(70, 9);
    const view = reader.view(answer(), writer.place(kept)!);
    expect(writer.place(ids(31, 1))).toBeNull();
    // fits after it without wrapping
    expect(writer.place(ids(30, 2))).toEqual({ start: 70, length: 30 });
    // none left, and nothing larger than the ring, nor empty, is ever placed
    expect(writer.place(ids(1, 3))).toBeNull();
    expect(writer.place(ids(101, 4))).toBeNull();
    expect(writer.place(new Uint32Array(0))).toBeNull();
    expect([...view]).toEqual([...kept]);
  });

  it('releases in the order ids were placed, whatever order the answers are collected in', () => {
    const { memory, writer, reader, answer } = ring(90);
    const ends: number[] = [];
    for (let i = 0; i < 3; i++) {
      const at = writer.place(ids(30, i))!;
      reader.view(answer(), at);
      ends.push(at.start + at.length);
    }
    expect(reader.held).toBe(3);
    expect(writer.place(ids(1, 9))).toBeNull();
    // the newest collected first: nothing is released while an older view lives
    reader.release(2);
    expect(released(memory)).toBe(0);
    expect(writer.place(ids(1, 9))).toBeNull();
    reader.release(0);
    expect(released(memory)).toBe(ends[0]);
    expect(reader.held).toBe(2);
    // the middle one: it and the newest (collected already) go together
    reader.release(1);
    expect(released(memory)).toBe(ends[2]);
    expect(reader.held).toBe(0);
    // a callback repeated, or for an answer released already, changes nothing
    reader.release(1);
    reader.release(7);
    expect(released(memory)).toBe(ends[2]);
  });

  it('never lets a live view see other ids (model: 300 schedules of placements, answers and collections)', () => {
    type Op = { kind: 'place'; n: number; newAnswer: boolean } | { kind: 'collect'; pick: number };
    const opArb: fc.Arbitrary<Op> = fc.oneof(
      fc.record({
        kind: fc.constant('place' as const),
        n: fc.integer({ min: 1, max: 40 }),
        newAnswer: fc.boolean(),
      }),
      fc.record({ kind: fc.constant('collect' as const), pick: fc.nat() }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 8, max: 64 }), fc.array(opArb, { maxLength: 120 }), (slots, ops) => {
        const { writer, reader, answer } = ring(slots);
        // the model: answers not collected yet, with the views and the ids each must keep reading
        const answers: { id: number; views: { view: Uint32Array; expected: Uint32Array }[] }[] = [];
        let current: { buffer: SharedArrayBuffer; id: number } | null = null;
        let nextAnswer = 0;
        let seed = 0;
        for (const op of ops) {
          if (op.kind === 'place') {
            const placed = ids(op.n, ++seed);
            const at = writer.place(placed);
            if (at === null) {
              // refused only for want of room: something is held, or the ids are larger than the ring
              expect(answers.length > 0 || op.n > slots).toBe(true);
              continue;
            }
            if (current === null || op.newAnswer) {
              current = { buffer: answer(), id: nextAnswer++ };
              answers.push({ id: current.id, views: [] });
            }
            const view = reader.view(current.buffer, at);
            answers.at(-1)!.views.push({ view, expected: placed });
          } else if (answers.length > 0) {
            // an answer's views all died: its buffer object is collected (any order); a new message comes next
            const [gone] = answers.splice(op.pick % answers.length, 1);
            reader.release(gone!.id);
            if (gone!.id === current?.id) current = null;
          }
          for (const a of answers) for (const v of a.views) expect(v.view).toEqual(v.expected);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('releases an answer once V8 collected its buffer object, and not while a subarray of a view lives', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const { memory, writer, reader, answer } = ring(1000);
    // made in a function of their own, so nothing here refers to the views or their buffers
    const place = (n: number, seed: number): Uint32Array => reader.view(answer(), writer.place(ids(n, seed))!);
    const collected = async (until: () => boolean): Promise<boolean> => {
      for (let i = 0; i < 50 && !until(); i++) {
        gc();
        // finalization callbacks run as tasks of their own, after the collection
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      return until();
    };
    place(100, 1);
    const kept: { tail: Uint32Array | null } = { tail: place(200, 2).subarray(150) };
    place(300, 3);
    expect(reader.held).toBe(3);
    // the first answer goes; the second's subarray keeps it (and the third behind it) held
    expect(await collected(() => released(memory) === 100)).toBe(true);
    expect(await collected(() => released(memory) > 100)).toBe(false);
    expect([...kept.tail!]).toEqual([...ids(200, 2).subarray(150)]);
    kept.tail = null;
    expect(await collected(() => released(memory) === 600)).toBe(true);
    expect(reader.held).toBe(0);
  });
});
