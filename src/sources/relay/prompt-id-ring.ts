// A ring of prompt token ids in shared memory: the scan thread writes a prompt's ids into it and the relay's event loop
// reads them through a Uint32Array view of it. Each request's ids otherwise arrive in an ArrayBuffer of their own,
// external memory that pushes V8 into extra collections and is freed on its GC helper threads.
//
// A prompt's ids are contiguous (when they do not fit before the ring's end, the writer skips to its start), so the
// view is one plain Uint32Array. Its memory is reused only once nothing can read it. Every answer of the thread that
// placed ids carries the ring's SharedArrayBuffer, and each message arrives with a SharedArrayBuffer object of its own
// over the same memory: the views of that answer are made on it, and every view, subarray (routerHashedTokens) or
// `.buffer` of them keeps that object alive. A FinalizationRegistry tells when V8 collected it, and room is released
// in the order the writer placed it (the shared counter advances over the longest prefix of collected answers), so no
// reader of the ids can outlive their slots. The event loop must never send a view or its buffer to another thread.
//
// V8 collects these objects in its full collections only (they live past the young generation's), so the ring holds
// what the event loop received between two of them; when the writer finds no room (the event loop holds too much) the
// caller sends the ids in a buffer of their own, as before: it never waits and never drops ids.
import { KvsentinelError } from '../../core/errors.js';

/** The ring's shared memory: the ids, and how far the event loop released them (a count of slots since the start). */
export interface PromptIdRingMemory {
  readonly ids: SharedArrayBuffer;
  readonly released: SharedArrayBuffer;
}

/** Where the writer put one prompt's ids: `start` counts slots since the ring began (it sits at start % size). */
export interface RingIds {
  readonly start: number;
  readonly length: number;
}

export function createPromptIdRingMemory(slots: number): PromptIdRingMemory {
  if (!Number.isInteger(slots) || slots <= 0) throw new KvsentinelError('internal', `prompt id ring: ${slots} slots`);
  return { ids: new SharedArrayBuffer(slots * 4), released: new SharedArrayBuffer(8) };
}

/** The scan thread's side: places ids where the event loop released room. */
export class PromptIdRingWriter {
  readonly #ids: Uint32Array;
  readonly #released: BigInt64Array;
  /** slots placed or skipped since the start (the writer alone moves it) */
  #written = 0;

  constructor(memory: PromptIdRingMemory) {
    this.#ids = new Uint32Array(memory.ids);
    this.#released = new BigInt64Array(memory.released);
  }

  /** Copies `ids` into the ring when they fit in the released room; null when they do not (send them otherwise). */
  place(ids: Uint32Array): RingIds | null {
    const size = this.#ids.length;
    const n = ids.length;
    if (n === 0 || n > size) return null;
    const at = this.#written % size;
    // contiguous: the tail too short for them is skipped, and released with them
    const start = at + n <= size ? this.#written : this.#written + (size - at);
    const released = Number(Atomics.load(this.#released, 0));
    // the ids must not reach the oldest slot still held (with none held, all of the ring is free)
    if (released < this.#written && start + n - released > size) return null;
    this.#ids.set(ids, start % size);
    this.#written = start + n;
    return { start, length: n };
  }
}

/**
 * The event loop's side: views of placed ids, on the SharedArrayBuffer object their answer arrived with; the room of
 * an answer is released once that object was collected (and every older answer's).
 */
export class PromptIdRingReader {
  readonly #slots: number;
  readonly #released: BigInt64Array;
  /**
   * the answers viewed, oldest first from #head on (the ones not released): where the last placement viewed in each
   * ends, and whether its buffer object was collected; #first numbers the answer at index 0
   */
  #ends: number[] = [];
  #collected: boolean[] = [];
  #head = 0;
  #first = 0;
  /** the buffer object of the newest answer viewed (its views extend its entry) */
  #newest: WeakRef<SharedArrayBuffer> | null = null;
  readonly #registry = new FinalizationRegistry<number>((answer) => this.release(answer));

  constructor(memory: PromptIdRingMemory) {
    this.#slots = memory.ids.byteLength / 4;
    this.#released = new BigInt64Array(memory.released);
  }

  /**
   * The view of ids the writer placed, on `buffer`: the ring's memory as the answer that said where they are brought
   * it (an object of that message's own). Call in the order the writer placed them, which is the order of its answers.
   * A placement never viewed is released with the next one viewed (nothing reads it).
   */
  view(buffer: SharedArrayBuffer, at: RingIds): Uint32Array {
    const view = new Uint32Array(buffer, (at.start % this.#slots) * 4, at.length);
    const end = at.start + at.length;
    if (this.#newest?.deref() === buffer) this.#ends[this.#ends.length - 1] = end;
    else {
      this.#registry.register(buffer, this.#first + this.#ends.length);
      this.#ends.push(end);
      this.#collected.push(false);
      this.#newest = new WeakRef(buffer);
    }
    return view;
  }

  /** answers whose room is still held (their buffer object alive, or an older one's) */
  get held(): number {
    return this.#ends.length - this.#head;
  }

  /**
   * @internal the registry's callback: the buffer object of `answer` was collected. The writer gets its room back up
   * to the end of the newest answer with every older one collected too.
   */
  release(answer: number): void {
    const i = answer - this.#first;
    if (i < this.#head || i >= this.#collected.length) return;
    this.#collected[i] = true;
    if (i !== this.#head) return;
    let head = this.#head;
    while (head < this.#collected.length && this.#collected[head]) head++;
    Atomics.store(this.#released, 0, BigInt(this.#ends[head - 1]!));
    this.#head = head;
    // drop the released entries now and then, not on every release (callbacks often come by the hundred)
    if (head >= 1024 && head * 2 >= this.#ends.length) {
      this.#ends = this.#ends.slice(head);
      this.#collected = this.#collected.slice(head);
      this.#first += head;
      this.#head = 0;
    }
  }
}
