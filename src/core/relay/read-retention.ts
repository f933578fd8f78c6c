// The bytes one process's relays keep of events every consumer has already read. Those events stay only so a router
// replica that joins a moment after another still receives the stream from the start (relay.retain_read); a relay
// that kept them up to its own buffer bound cost 64 MiB a relay in steady state, 4 GiB at 64 servers
// (BENCHMARKS.md §9), for a history no running router reads. So the read history is one budget for the whole
// process, shared equally by the relays it runs (a relay joins when it starts and leaves when it stops). Events a
// consumer has not read are never released by it: their bound is each relay's own (relay.buffer_max_bytes).
import { KvsentinelError } from '../errors.js';

/** A relay's part of the budget: what its read history may hold now (the budget changes as relays come and go). */
export interface ReadRetentionShare {
  limitBytes(): number;
  /** the relay stopped: its part goes back to the others (idempotent) */
  leave(): void;
}

/** relay.retain_read_bytes' default: the read history of every relay together (four relays at their 64 MiB bound) */
export const DEFAULT_RETAIN_READ_BYTES = 256 * 1024 * 1024;

export class ReadRetentionPool {
  #totalBytes: number;
  #members = 0;

  constructor(totalBytes: number = DEFAULT_RETAIN_READ_BYTES) {
    this.#totalBytes = ReadRetentionPool.#checked(totalBytes);
  }

  get members(): number {
    return this.#members;
  }

  /** A reload changed relay.retain_read_bytes: every share follows at its relay's next append or read. */
  resize(totalBytes: number): void {
    this.#totalBytes = ReadRetentionPool.#checked(totalBytes);
  }

  join(): ReadRetentionShare {
    this.#members++;
    let left = false;
    return {
      limitBytes: () => this.#totalBytes / Math.max(1, this.#members),
      leave: () => {
        if (left) return;
        left = true;
        this.#members--;
      },
    };
  }

  static #checked(totalBytes: number): number {
    if (!(totalBytes >= 0)) throw new KvsentinelError('internal', `retain_read_bytes must be >= 0, got ${totalBytes}`);
    return totalBytes;
  }
}
