// The relays' counters per server id, summed over the relays a reload replaced, so exported counters never go back.
import { SCAN_FALLBACK_REASONS, type ScanFallbackReason } from '../../core/relay/scan-fallback.js';
import type { RelayCounters } from '../../core/observe/sidecar-stats.js';

function addCounters(a: RelayCounters | undefined, b: RelayCounters): RelayCounters {
  if (a === undefined) return b;
  return {
    server: b.server,
    abandonedPolls: a.abandonedPolls + b.abandonedPolls,
    capturesTruncated: a.capturesTruncated + b.capturesTruncated,
    eventsEvicted: a.eventsEvicted + b.eventsEvicted,
    consumersExpired: a.consumersExpired + b.consumersExpired,
    consumersEvicted: a.consumersEvicted + b.consumersEvicted,
    resumePositionsDiscarded: a.resumePositionsDiscarded + b.resumePositionsDiscarded,
    readHistoryReleased: a.readHistoryReleased + b.readHistoryReleased,
    upstreamRetries: a.upstreamRetries + b.upstreamRetries,
    eventsRedelivered: a.eventsRedelivered + b.eventsRedelivered,
    scanFallbacks: Object.fromEntries(
      SCAN_FALLBACK_REASONS.map((r) => [r, a.scanFallbacks[r] + b.scanFallbacks[r]]),
    ) as Record<ScanFallbackReason, number>,
  };
}

export class RelayCounterTotals {
  readonly #retired = new Map<string, RelayCounters>();

  /** a relay stopped for good (a reload replaced or removed it): its counts stay in the totals */
  retire(server: string, counters: RelayCounters): void {
    this.#retired.set(server, addCounters(this.#retired.get(server), counters));
  }

  /** the retired counts plus the running relays' */
  totals(running: Iterable<{ readonly server: string; readonly counters: RelayCounters }>): RelayCounters[] {
    const total = new Map(this.#retired);
    for (const r of running) total.set(r.server, addCounters(total.get(r.server), r.counters));
    return [...total.values()];
  }
}
