// Reads a ZMTP 3 byte stream as it arrives in chunks: first the peer's 64-byte greeting (refused at its first bytes
// when they cannot start one), then frames (a flags byte,
// a size of 1 byte or, with the LONG flag, 8 bytes big-endian, then the body). A frame inside one chunk is handed on
// as a view of that chunk, with no copy; only a frame split across chunks is joined, once, when its last byte is
// there. A size above the bound is an error (the peer is not sending KV events, or the stream is corrupt): without
// the bound a bogus 8-byte size would make the reader wait for, and hold, bytes for ever.
import { FLAG_LONG, GREETING_BYTES, signatureProblem } from './zmtp-handshake.js';

export interface ZmtpReaderHandlers {
  greeting(bytes: Uint8Array): void;
  frame(flags: number, body: Uint8Array): void;
}

/** a frame above this is refused: a live batch is a few KiB, a replayed buffer of 10,000 batches a few MiB */
export const DEFAULT_MAX_FRAME_BYTES = 256 * 1024 * 1024;

/** the most a frame's flags and size take */
const MAX_HEAD = 9;

export class ZmtpReader {
  readonly #handlers: ZmtpReaderHandlers;
  readonly #maxFrameBytes: number;
  #greeted = false;
  /** bytes of an unfinished greeting or frame, in the order they came */
  #parts: Uint8Array[] = [];
  #partsBytes = 0;
  /** bytes the unfinished greeting or frame needs in all (0: its head is not all here yet) */
  #needed = 0;
  #error: string | null = null;
  /** the stream offset of the first byte not yet read (an error names its position in the stream) */
  #offset = 0;

  constructor(handlers: ZmtpReaderHandlers, maxFrameBytes = DEFAULT_MAX_FRAME_BYTES) {
    this.#handlers = handlers;
    this.#maxFrameBytes = maxFrameBytes;
  }

  /** why the stream stopped being readable, or null */
  get error(): string | null {
    return this.#error;
  }

  /** Reads a chunk; false once the stream is unreadable (see error): nothing after that is read. */
  push(chunk: Uint8Array): boolean {
    if (this.#error !== null) return false;
    let bytes = chunk;
    if (this.#parts.length > 0) {
      this.#parts.push(chunk);
      this.#partsBytes += chunk.length;
      // a long frame arrives in many chunks: join them once it is whole, not at every chunk
      if (this.#needed > 0 && this.#partsBytes < this.#needed) return true;
      bytes = join(this.#parts, this.#partsBytes);
      this.#parts = [];
      this.#partsBytes = 0;
      this.#needed = 0;
    }
    const base = this.#offset;
    let at = 0;
    if (!this.#greeted) {
      this.#error = signatureProblem(bytes);
      if (this.#error !== null) return false;
      if (bytes.length < GREETING_BYTES) return this.#keep(bytes, 0, GREETING_BYTES);
      this.#greeted = true;
      this.#handlers.greeting(bytes.subarray(0, GREETING_BYTES));
      at = GREETING_BYTES;
    }
    const end = bytes.length;
    while (at < end) {
      const flags = bytes[at]!;
      let head: number;
      let size: number;
      if ((flags & FLAG_LONG) === 0) {
        if (at + 2 > end) return this.#keep(bytes, at, 0);
        head = 2;
        size = bytes[at + 1]!;
      } else {
        if (at + MAX_HEAD > end) return this.#keep(bytes, at, 0);
        head = MAX_HEAD;
        const hi = ((bytes[at + 1]! << 24) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 8) | bytes[at + 4]!) >>> 0;
        const lo = ((bytes[at + 5]! << 24) | (bytes[at + 6]! << 16) | (bytes[at + 7]! << 8) | bytes[at + 8]!) >>> 0;
        size = hi * 2 ** 32 + lo;
      }
      if (size > this.#maxFrameBytes) {
        this.#error = `a frame of ${size} bytes at byte ${base + at} of the stream, above the bound of ${this.#maxFrameBytes}`;
        return false;
      }
      if (at + head + size > end) return this.#keep(bytes, at, head + size);
      this.#handlers.frame(flags, bytes.subarray(at + head, at + head + size));
      at += head + size;
    }
    this.#offset = base + end;
    return true;
  }

  /** Keeps bytes[at..] for the next chunk; `needed`: the unfinished unit's whole length, 0 while its head is short. */
  #keep(bytes: Uint8Array, at: number, needed: number): boolean {
    this.#offset += at;
    const rest = bytes.subarray(at);
    this.#parts = [rest];
    this.#partsBytes = rest.length;
    this.#needed = needed;
    return true;
  }
}

function join(parts: readonly Uint8Array[], total: number): Uint8Array {
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
