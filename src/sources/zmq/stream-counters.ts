// What a ZMQ stream source counts per rank, for /metrics (kvsentinel_stream_*). Gaps, lost batches and resets also
// reach the state (stream-sequence observations), where the findings and kvsentinel_kv_event_gaps_total read them.

export interface StreamRankCounters {
  readonly server: string;
  readonly rank: number;
  /** batches delivered in seq order (live or replayed) */
  readonly batches: number;
  readonly replayedBatches: number;
  readonly replayRequests: number;
  /** batches that never arrived (seq gaps replay did not fill) */
  readonly lostBatches: number;
  readonly gaps: number;
  readonly resets: number;
  /** messages or payloads that could not be read (wrong frames, not msgpack, bad envelope) */
  readonly malformed: number;
  /** stored blocks no prompt can match (parent stored before subscribing, tokens absent or not integers) */
  readonly unresolvedBlocks: number;
  /** removed hashes that matched no resident copy (a missed store, history before the subscription) */
  readonly unmatchedRemovals: number;
}

export interface MutableRankCounters {
  batches: number;
  replayedBatches: number;
  replayRequests: number;
  lostBatches: number;
  gaps: number;
  resets: number;
  malformed: number;
  unresolvedBlocks: number;
  unmatchedRemovals: number;
}

export function emptyRankCounters(): MutableRankCounters {
  return {
    batches: 0,
    replayedBatches: 0,
    replayRequests: 0,
    lostBatches: 0,
    gaps: 0,
    resets: 0,
    malformed: 0,
    unresolvedBlocks: 0,
    unmatchedRemovals: 0,
  };
}
