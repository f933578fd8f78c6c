// The sidecar's own counters (relays, streams, forwarding sockets, the live feed), as the latest `sidecar-stats`
// observation states them: each is cumulative and whole, so it replaces the one before (a relay that went away
// with a reload is still inside the daemon's totals; a stream that went away is gone, as its series are).
import type { SidecarStatsObservation } from '../observe/observation.js';
import { NO_SIDECAR_STATS, type SidecarStats } from '../observe/sidecar-stats.js';

export class SidecarStatsReducer {
  #latest: SidecarStats = NO_SIDECAR_STATS;
  #at: number | null = null;

  stats(obs: SidecarStatsObservation): void {
    // older than what is held (a bundle merged out of order): the counters never go back
    if (this.#at !== null && obs.ts < this.#at) return;
    this.#at = obs.ts;
    this.#latest = { relays: obs.relays, streams: obs.streams, forwards: obs.forwards, feed: obs.feed };
  }

  get latest(): SidecarStats {
    return this.#latest;
  }
}
