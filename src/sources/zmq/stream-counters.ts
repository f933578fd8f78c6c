// What a ZMQ stream source counts per rank as it runs; its readonly view is core/observe/sidecar-stats.ts's
// StreamRankCounters, which the daemon observes (sidecar-stats).

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
