// A bundle line's `sidecar-stats` observation (the relays', streams', forwarding sockets' and live feed's cumulative
// counters), every value checked; it is encoded as it is (plain JSON). A problem is a DecodeError with its path.
import type { SidecarStatsObservation } from '../observe/observation.js';
import type { ForwardCounters, RelayCounters, StreamRankCounters } from '../observe/sidecar-stats.js';
import { SCAN_FALLBACK_REASONS, type ScanFallbackReason } from '../relay/scan-fallback.js';
import { DecodeError, arr, asObject, boolOrNull, num, str, type Json, type JsonObject } from './bundle-fields.js';

/** Decodes each entry of an array field, naming its index in the path. */
function each<T>(value: Json | undefined, path: string, one: (o: JsonObject, at: string) => T): T[] {
  return arr(value, path).map((v, i) => one(asObject(v, `${path}[${i}]`), `${path}[${i}]`));
}

/** A count: a finite number, never negative (cumulative counters). */
function count(value: Json | undefined, path: string): number {
  const n = num(value, path);
  if (n < 0) throw new DecodeError(path, `expected a count, got ${n}`);
  return n;
}

function relay(o: JsonObject, at: string): RelayCounters {
  const fallbacks = asObject(o.scanFallbacks, `${at}.scanFallbacks`);
  return {
    server: str(o.server, `${at}.server`),
    abandonedPolls: count(o.abandonedPolls, `${at}.abandonedPolls`),
    capturesTruncated: count(o.capturesTruncated, `${at}.capturesTruncated`),
    eventsEvicted: count(o.eventsEvicted, `${at}.eventsEvicted`),
    consumersExpired: count(o.consumersExpired, `${at}.consumersExpired`),
    consumersEvicted: count(o.consumersEvicted, `${at}.consumersEvicted`),
    resumePositionsDiscarded: count(o.resumePositionsDiscarded, `${at}.resumePositionsDiscarded`),
    // bundles recorded before the read-history budget have no such count
    readHistoryReleased:
      o.readHistoryReleased === undefined ? 0 : count(o.readHistoryReleased, `${at}.readHistoryReleased`),
    upstreamRetries: count(o.upstreamRetries, `${at}.upstreamRetries`),
    eventsRedelivered: count(o.eventsRedelivered, `${at}.eventsRedelivered`),
    scanFallbacks: Object.fromEntries(
      SCAN_FALLBACK_REASONS.map((r) => [r, count(fallbacks[r], `${at}.scanFallbacks.${r}`)]),
    ) as Record<ScanFallbackReason, number>,
  };
}

function streamRank(o: JsonObject, at: string): StreamRankCounters {
  const c = (field: keyof StreamRankCounters): number => count(o[field], `${at}.${field}`);
  return {
    server: str(o.server, `${at}.server`),
    rank: c('rank'),
    batches: c('batches'),
    replayedBatches: c('replayedBatches'),
    replayRequests: c('replayRequests'),
    lostBatches: c('lostBatches'),
    gaps: c('gaps'),
    resets: c('resets'),
    malformed: c('malformed'),
    unresolvedBlocks: c('unresolvedBlocks'),
    unmatchedRemovals: c('unmatchedRemovals'),
  };
}

function forward(o: JsonObject, at: string): ForwardCounters {
  return {
    endpoint: str(o.endpoint, `${at}.endpoint`),
    to: str(o.to, `${at}.to`),
    forwarded: count(o.forwarded, `${at}.forwarded`),
    failed: count(o.failed, `${at}.failed`),
    connected: boolOrNull(o.connected, `${at}.connected`) ?? false,
  };
}

export function decodeSidecarStats(o: JsonObject, ts: number): SidecarStatsObservation {
  const feed = asObject(o.feed, '$.feed');
  return {
    kind: 'sidecar-stats',
    ts,
    relays: each(o.relays, '$.relays', relay),
    streams: each(o.streams, '$.streams', streamRank),
    forwards: each(o.forwards, '$.forwards', forward),
    feed: {
      droppedFrames: count(feed.droppedFrames, '$.feed.droppedFrames'),
      refusedClients: count(feed.refusedClients, '$.feed.refusedClients'),
    },
  };
}
