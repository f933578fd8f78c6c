// A bounded copy of a body passing through the relay: the relay reads the prompt and the usage from it, never more
// than its bound, whatever the body's size.
/**
 * Keeps the first `max` bytes; past that only a rolling tail of `tailBytes` (0: nothing more), and remembers that it
 * is incomplete.
 */
export class BodyCapture {
  readonly #max: number;
  readonly #tailBytes: number;
  #chunks: Buffer[] = [];
  #bytes = 0;
  #overflow = false;

  constructor(max: number, tailBytes: number) {
    this.#max = max;
    this.#tailBytes = tailBytes;
  }

  add(chunk: Buffer): void {
    if (this.#overflow && this.#tailBytes === 0) return;
    this.#chunks.push(chunk);
    this.#bytes += chunk.length;
    if (this.#bytes > this.#max) {
      this.#overflow = true;
      if (this.#tailBytes === 0) {
        this.#chunks = [];
        this.#bytes = 0;
        return;
      }
      // keep a tail only
      while (this.#chunks.length > 1 && this.#bytes - (this.#chunks[0] as Buffer).length >= this.#tailBytes) {
        this.#bytes -= (this.#chunks.shift() as Buffer).length;
      }
    }
  }

  get complete(): boolean {
    return !this.#overflow;
  }

  bytes(): Buffer {
    return Buffer.concat(this.#chunks, this.#bytes);
  }

  text(): string {
    return this.bytes().toString('utf8');
  }
}
