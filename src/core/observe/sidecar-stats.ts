// What the sidecar's own parts count, cumulative: each relay (what it dropped, retried, read slowly), each ZMQ stream
// rank (batches, replays, losses, malformed input), each bound socket that forwards, and the live feed. The daemon
// observes them as one `sidecar-stats` observation (the whole picture, each value since the daemon started), so
// /metrics reads them from the state's snapshot and a recorded bundle carries them.
import type { ScanFallbackCounts } from '../relay/scan-fallback.js';

/** What a relay dropped or gave up on, cumulative (the exporter's cache and poll counters). */
export interface RelayCounters {
  readonly server: string;
  /** event polls whose consumer hung up before the answer */
  readonly abandonedPolls: number;
  /** request or response copies that hit their bound (prompt or usage not read) */
  readonly capturesTruncated: number;
  /** events evicted from the event buffer by its bounds (read or not) */
  readonly eventsEvicted: number;
  readonly consumersExpired: number;
  readonly consumersEvicted: number;
  readonly resumePositionsDiscarded: number;
  /** events every consumer had read, released early because the process's read-history budget was full */
  readonly readHistoryReleased: number;
  /** requests sent again on a fresh connection after their connection was lost before any response byte */
  readonly upstreamRetries: number;
  /** events delivered to a consumer that had already received them (0 by design; counted, never hidden) */
  readonly eventsRedelivered: number;
  /** CTX exchanges read on a slow path, by reason (same answers, more CPU) */
  readonly scanFallbacks: ScanFallbackCounts;
}

/** What a ZMQ stream source counts per rank (kvsentinel_stream_*). Gaps, lost batches and resets also reach the
 * state as stream-sequence observations, where the findings and kvsentinel_kv_event_gaps_total read them. */
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

/** A bound socket's forward= consumer (--zmq-bind forward=): what it passed on. */
export interface ForwardCounters {
  readonly endpoint: string;
  readonly to: string;
  readonly forwarded: number;
  readonly failed: number;
  /** the consumer's connection is up (a ZMTP handshake and no disconnect since) */
  readonly connected: boolean;
}

/** The live feed's drops. */
export interface FeedCounters {
  readonly droppedFrames: number;
  readonly refusedClients: number;
}

/** Everything the sidecar counted of itself at one moment; a later one replaces it whole. */
export interface SidecarStats {
  /** per relay server id, summed over the relays a reload replaced (exported counters never go back) */
  readonly relays: readonly RelayCounters[];
  /** per rank of the running streams */
  readonly streams: readonly StreamRankCounters[];
  /** per forwarding socket of the running streams */
  readonly forwards: readonly ForwardCounters[];
  readonly feed: FeedCounters;
}

export const NO_SIDECAR_STATS: SidecarStats = {
  relays: [],
  streams: [],
  forwards: [],
  feed: { droppedFrames: 0, refusedClients: 0 },
};
