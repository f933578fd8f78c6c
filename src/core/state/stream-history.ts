// History a ZMQ subscriber joined too late to replay, per server and rank: the publisher's replay buffer no longer
// held its first batches, so worker truth lacks whatever they stored and the oracle cannot see those blocks. The
// gap closes once the table has turned over: the rank cleared its cache or restarted (a new table), or, with a
// stated capacity (kv_capacity_blocks or a `created` event, never the observed peak, which counts known blocks
// only), once the rank removed as many blocks as it holds (its pool has cycled) or the table holds as many known
// blocks as the worker can (no room is left for unknown ones). Without a capacity only a clear or a restart closes it.
import type { KvEvent } from '../wire/kv-event.js';
import type { WorkerCapacityView } from './worker-capacity.js';

export interface StreamHistoryGap {
  readonly rank: number;
  /** when the sidecar joined: blocks stored before are unknown */
  readonly since: number;
  /** batches the publisher no longer buffered */
  readonly missingBatches: number;
  /** blocks the rank removed since, toward turning its table over */
  readonly removedSince: number;
}

interface OpenGap {
  readonly since: number;
  missingBatches: number;
  removedSince: number;
}

export class StreamHistory {
  readonly #open = new Map<string, Map<number, OpenGap>>();

  /** The sidecar subscribed after `missing` batches of this rank it cannot replay. */
  incomplete(server: string, rank: number, ts: number, missing: number): void {
    let ranks = this.#open.get(server);
    if (ranks === undefined) {
      ranks = new Map();
      this.#open.set(server, ranks);
    }
    const open = ranks.get(rank);
    if (open !== undefined) open.missingBatches += missing;
    else ranks.set(rank, { since: ts, missingBatches: missing, removedSince: 0 });
  }

  /** A streamed event of the rank: removals turn the table over, a clear empties it. */
  observeEvent(server: string, rank: number, event: KvEvent): void {
    const open = this.#open.get(server)?.get(rank);
    if (open === undefined) return;
    if (event.data.type === 'removed') open.removedSince += event.data.blockHashes.length;
    else if (event.data.type === 'all_cleared') this.#close(server, rank);
  }

  /** The rank's publisher restarted: its new table starts empty, nothing earlier is missing. */
  reset(server: string, rank: number): void {
    this.#close(server, rank);
  }

  /** Closes the gaps of `server` whose table has turned over, given what the worker holds and what the table does. */
  settle(server: string, capacity: WorkerCapacityView | null, ranks: number, truthBlocks: number): void {
    const open = this.#open.get(server);
    if (open === undefined || capacity === null || capacity.from === 'observed peak residency') return;
    const perRank = Math.ceil(capacity.blocks / Math.max(1, ranks));
    for (const [rank, gap] of open)
      if (gap.removedSince >= perRank || truthBlocks >= capacity.blocks) this.#close(server, rank);
  }

  of(server: string): StreamHistoryGap[] {
    const open = this.#open.get(server);
    if (open === undefined) return [];
    return [...open].map(([rank, g]) => ({ rank, ...g })).sort((a, b) => a.rank - b.rank);
  }

  #close(server: string, rank: number): void {
    const open = this.#open.get(server);
    open?.delete(rank);
    if (open?.size === 0) this.#open.delete(server);
  }
}
