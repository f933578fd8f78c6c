// Events the relay drained from a worker but has not yet delivered to the router, in relay-sequence order, kept in
// a compact form (block keys only — no tokens) until a `router-poll` says which of them the router received.
// Capped per server (drop-oldest, counted): a router that never polls must not grow memory.
import { blockKey64 } from '../hashing/block-key.js';
import type { HashAlgo, KvEvent, KvEventData } from '../wire/kv-event.js';

interface Entry {
  readonly seq: number;
  readonly event: CompactEvent;
}

export interface CompactEvent {
  readonly type: KvEventData['type'];
  readonly hashAlgo: HashAlgo | null;
  readonly attentionDpRank: number | null;
  /** stored: keys of the stored blocks; removed: removed keys; otherwise null */
  readonly keys: BigUint64Array | null;
}

export function compactEvent(event: KvEvent): CompactEvent {
  const data = event.data;
  let keys: BigUint64Array | null = null;
  // plain loops: BigUint64Array.from with a map function is several times slower on this hot path
  if (data.type === 'stored') {
    const blocks = data.blocks;
    keys = new BigUint64Array(blocks.length);
    for (let i = 0; i < blocks.length; i++) keys[i] = blockKey64(blocks[i]!.blockHash);
  } else if (data.type === 'removed') {
    const hashes = data.blockHashes;
    keys = new BigUint64Array(hashes.length);
    for (let i = 0; i < hashes.length; i++) keys[i] = blockKey64(hashes[i]!);
  }
  return { type: data.type, hashAlgo: event.hashAlgo, attentionDpRank: event.attentionDpRank, keys };
}

export class RelayBuffer {
  readonly #cap: number;
  #entries: Entry[] = [];
  #head = 0;
  /** events up to (excluding) this seq were delivered to the router */
  #deliveredUpTo = 0;
  #dropped = 0;
  #missed = 0;

  constructor(cap: number) {
    this.#cap = cap;
  }

  get dropped(): number {
    return this.#dropped;
  }

  /** events the router received that the buffer no longer (or never) held */
  get missed(): number {
    return this.#missed;
  }

  get size(): number {
    return this.#entries.length - this.#head;
  }

  /**
   * Adds a drained event. Returns it when the router already received it (its poll was observed first), so the
   * caller applies it at once; otherwise null.
   */
  push(seq: number, event: KvEvent): CompactEvent | null {
    const compact = compactEvent(event);
    if (seq < this.#deliveredUpTo) return compact;
    this.#entries.push({ seq, event: compact });
    if (this.size > this.#cap) {
      this.#head++;
      this.#dropped++;
    }
    this.#compact();
    return null;
  }

  /** The router received relay events [fromSeq, toSeq): returns those still held, in order, and forgets them. */
  deliver(fromSeq: number, toSeq: number): CompactEvent[] {
    const out: CompactEvent[] = [];
    const start = Math.max(fromSeq, this.#deliveredUpTo);
    let expected = start;
    while (this.#head < this.#entries.length) {
      const entry = this.#entries[this.#head]!;
      if (entry.seq >= toSeq) break;
      this.#head++;
      if (entry.seq < start) continue;
      this.#missed += entry.seq - expected;
      expected = entry.seq + 1;
      out.push(entry.event);
    }
    if (toSeq > this.#deliveredUpTo) this.#deliveredUpTo = toSeq;
    this.#compact();
    return out;
  }

  #compact(): void {
    if (this.#head > 1024 && this.#head * 2 > this.#entries.length) {
      this.#entries = this.#entries.slice(this.#head);
      this.#head = 0;
    }
  }
}
