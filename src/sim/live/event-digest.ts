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
  return { attention_dp_rank: event.attentionDpRank, event_id: event.eventId, type: data.type, block_hashes: hashes, parent_hash: parent };
}

/** A bounded log of digests (oldest dropped beyond `limit`, counted). */
export class DigestLog {
  readonly limit: number;
  readonly entries: EventDigest[] = [];
  dropped = 0;
  total = 0;

  constructor(limit = 200_000) {
    this.limit = limit;
  }

  add(events: readonly KvEvent[]): void {
    for (const event of events) {
      this.entries.push(digestEvent(event));
      this.total++;
    }
    const over = this.entries.length - this.limit;
    if (over > 0) {
      this.entries.splice(0, over);
      this.dropped += over;
    }
  }
}
