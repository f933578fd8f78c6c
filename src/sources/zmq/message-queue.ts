// The ZMTP subscriber's queue: whole messages, and what happened to a connection, in the order they came. A message
// is kept as where its frames lie (their chunk, offset and length, in typed arrays), not as views: under overload the
// queue holds its high-water mark of 100,000 messages for seconds, and an array of three views per message was 35 MiB
// of objects that all outlived the young generation and were collected only by the full GCs (BENCHMARKS §10). The
// views are made again as each message is handed on, and die young.

import { KvsentinelError } from '../../core/errors.js';

/** entries (messages or calls) in one segment */
const SEGMENT_ENTRIES = 1024;
/** frames in one segment (a live message has 3) */
const SEGMENT_FRAMES = 4096;
/** an entry that is a call, not a message */
const CALL = 0xff;

export type QueuedEntry = Uint8Array[] | (() => void);

class Segment {
  /** the chunks its frames lie in, each once in a row */
  readonly buffers: ArrayBufferLike[] = [];
  readonly frameBuffer = new Uint16Array(SEGMENT_FRAMES);
  readonly frameOffset = new Uint32Array(SEGMENT_FRAMES);
  readonly frameLength = new Uint32Array(SEGMENT_FRAMES);
  readonly entryFrames = new Uint8Array(SEGMENT_ENTRIES);
  readonly calls = new Map<number, () => void>();
  entries = 0;
  frames = 0;
  /** the next entry handed on, and its first frame */
  readEntry = 0;
  readFrame = 0;

  /** Empties it for reuse: a queue that keeps up runs empty every slice, and a fresh segment is 45 KiB. */
  reset(): void {
    this.buffers.length = 0;
    this.calls.clear();
    this.entries = this.frames = this.readEntry = this.readFrame = 0;
  }

  fits(frames: number): boolean {
    return (
      this.entries < SEGMENT_ENTRIES && this.frames + frames <= SEGMENT_FRAMES && this.buffers.length + frames <= 0xffff
    );
  }
}

export class MessageQueue {
  /** segments from the oldest; the last is written */
  #segments: (Segment | undefined)[] = [];
  #head = 0;
  #length = 0;

  /** messages and calls queued */
  get length(): number {
    return this.#length;
  }

  /** A message, its frames in order (at most 254). */
  pushMessage(frames: readonly Uint8Array[]): void {
    if (frames.length >= CALL)
      throw new KvsentinelError('internal', `a queued message has at most ${CALL - 1} frames, got ${frames.length}`);
    const s = this.#writable(frames.length);
    for (const frame of frames) {
      const f = s.frames++;
      if (s.buffers.at(-1) !== frame.buffer) s.buffers.push(frame.buffer);
      s.frameBuffer[f] = s.buffers.length - 1;
      s.frameOffset[f] = frame.byteOffset;
      s.frameLength[f] = frame.length;
    }
    s.entryFrames[s.entries++] = frames.length;
    this.#length++;
  }

  pushCall(call: () => void): void {
    const s = this.#writable(0);
    s.calls.set(s.entries, call);
    s.entryFrames[s.entries++] = CALL;
    this.#length++;
  }

  /** The oldest entry, taken off the queue; undefined when it is empty. */
  shift(): QueuedEntry | undefined {
    if (this.#length === 0) return undefined;
    let s = this.#segments[this.#head]!;
    if (s.readEntry === s.entries) {
      // written no more once a later one exists: let it go
      this.#segments[this.#head++] = undefined;
      s = this.#segments[this.#head]!;
    }
    this.#length--;
    const e = s.readEntry++;
    const n = s.entryFrames[e]!;
    if (n === CALL) {
      const call = s.calls.get(e)!;
      s.calls.delete(e);
      if (this.#length === 0) this.#restart(s);
      return call;
    }
    const frames: Uint8Array[] = new Array<Uint8Array>(n);
    for (let i = 0; i < n; i++) {
      const f = s.readFrame++;
      frames[i] = new Uint8Array(s.buffers[s.frameBuffer[f]!]!, s.frameOffset[f], s.frameLength[f]);
    }
    if (this.#length === 0) this.#restart(s);
    return frames;
  }

  clear(): void {
    this.#segments = [];
    this.#head = 0;
    this.#length = 0;
  }

  /** Emptied: the last segment is written again from its start. */
  #restart(last: Segment): void {
    last.reset();
    this.#segments = [last];
    this.#head = 0;
  }

  #writable(frames: number): Segment {
    let s = this.#segments.at(-1);
    if (s === undefined || !s.fits(frames)) {
      s = new Segment();
      if (this.#head > 64 && this.#head * 2 > this.#segments.length) {
        this.#segments = this.#segments.slice(this.#head);
        this.#head = 0;
      }
      this.#segments.push(s);
    }
    return s;
  }
}
