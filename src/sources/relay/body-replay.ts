// A request body kept until the upstream answers, so a request that lost its connection before any response byte
// (a worker closing an idle keep-alive socket just as the relay reused it: TensorRT-LLM's trtllm-serve closes
// them after 5 s) is sent again on a fresh connection instead of failing with a 502. Bounded: a body larger than
// `maxBytes` is not kept and such a request is not retried.

export class BodyReplay {
  readonly #maxBytes: number;
  #chunks: Buffer[] = [];
  #bytes = 0;
  #kept = true;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  /** whether the whole body so far is kept (the upstream has not answered, the bound was not crossed) */
  get replayable(): boolean {
    return this.#kept;
  }

  /** the chunks kept so far, in order */
  get chunks(): readonly Buffer[] {
    return this.#chunks;
  }

  record(chunk: Buffer): void {
    if (!this.#kept) return;
    this.#bytes += chunk.length;
    if (this.#bytes > this.#maxBytes) this.release();
    else this.#chunks.push(chunk);
  }

  /** the upstream answered (or the bound was crossed): nothing is kept from now on */
  release(): void {
    this.#kept = false;
    this.#chunks = [];
  }
}

const RETRYABLE = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE', 'UND_ERR_CLOSED']);

/** A connection closed or reset under the request: worth one retry on a fresh connection if nothing was answered. */
export function isConnectionLost(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && RETRYABLE.has(code);
}
