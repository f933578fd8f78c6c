// A comparable summary of one KV event: (rank, event_id), its type and the block hashes it names as exact decimal
// (or hex) strings. Workers record what they served on `/kv_cache_events`, the orchestrator what its router
// applied, so a test can check "served == applied, exactly once, bit-identical" over HTTP.
import type { KvEvent, WireBlockHash } from '../../core/wire/kv-event.js';

export interface EventDigest {
  readonly attention_dp_rank: number | null;
  readonly event_id: number | null;
  readonly type: string;
  /** stored: the blocks' hashes; removed: the removed hashes; updated: the one hash; else [] */
  readonly block_hashes: readonly string[];
  /** stored: parent_hash */
  readonly parent_hash: string | null;
}

function text(hash: WireBlockHash): string {
  return typeof hash === 'bigint' ? hash.toString() : hash;
}

export function digestEvent(event: KvEvent): EventDigest {
  const data = event.data;
  let hashes: string[] = [];
  let parent: string | null = null;
  switch (data.type) {
    case 'stored':
      hashes = data.blocks.map((b) => text(b.blockHash));
      parent = data.parentHash === null ? null : text(data.parentHash);
      break;
    case 'removed':
      hashes = data.blockHashes.map(text);
      break;
    case 'updated':
      hashes = [text(data.blockHash)];
      break;
    case 'created':
    case 'all_cleared':
      break;
  }
  return {
    attention_dp_rank: event.attentionDpRank,
    event_id: event.eventId,
    type: data.type,
    block_hashes: hashes,
    parent_hash: parent,
  };
}

/** A bounded log of digests: the oldest are dropped (and counted) beyond `limit` events or `maxHashes` hashes. */
export class DigestLog {
  readonly limit: number;
  readonly maxHashes: number;
  readonly entries: EventDigest[] = [];
  dropped = 0;
  total = 0;
  #hashes = 0;

  constructor(limit = 100_000, maxHashes = 250_000) {
    this.limit = limit;
    this.maxHashes = maxHashes;
  }

  add(events: readonly KvEvent[]): void {
    for (const event of events) {
      const digest = digestEvent(event);
      this.entries.push(digest);
      this.#hashes += digest.block_hashes.length;
      this.total++;
    }
    let drop = 0;
    while (drop < this.entries.length && (this.entries.length - drop > this.limit || this.#hashes > this.maxHashes)) {
      this.#hashes -= this.entries[drop]!.block_hashes.length;
      drop++;
    }
    if (drop > 0) {
      this.entries.splice(0, drop);
      this.dropped += drop;
    }
  }
}
