// The behavioural test behind cache-signal-inert: does the router send a request to the server holding its prefix
// more often than a router blind to the cache would? A blind router is modelled two ways from what the sidecar
// saw at decision time: load-only (it picks among the least-loaded servers by in-flight count, uniformly) and
// uniform (any server). Only decisions where the two could differ from a cache-aware choice are informative:
//   away — no holder is among the least loaded: load-only never picks a holder, a cache-aware router does;
//   tie  — some but not all of the least-loaded servers hold the prefix: the cache term breaks the tie.
// A decision where every least-loaded server holds the prefix says nothing (both routers pick a holder).
// Traffic concentrated on one server is then no evidence of inertness: the busy holder wins `away` decisions.

export type PreferenceSet = 'away' | 'tie';

export interface PreferenceSample {
  readonly set: PreferenceSet;
  /** the chosen server is a holder */
  readonly holderChosen: boolean;
  /** probability a blind router picks a holder: max(load-only, uniform) */
  readonly blindProbability: number;
}

/**
 * Classifies one decision. `inflight` is the in-flight count per server when the request was sent (servers missing
 * from it count 0), `holders` the servers holding the longest prefix (or the trajectory's previous server).
 * Null when the decision is not informative (no load report, no holder, or every candidate holds the prefix).
 */
export function classifyPreference(
  chosen: string,
  holders: readonly string[],
  inflight: Readonly<Record<string, number>> | null,
  serverCount: number,
): PreferenceSample | null {
  if (inflight === null || holders.length === 0) return null;
  const servers = new Set([...Object.keys(inflight), chosen, ...holders]);
  const n = Math.max(serverCount, servers.size);
  if (n < 2 || holders.length >= n) return null;
  // servers the sidecar knows of but saw no load for count as idle
  const unseen = n - servers.size;
  let min = unseen > 0 ? 0 : Number.POSITIVE_INFINITY;
  for (const s of servers) min = Math.min(min, inflight[s] ?? 0);
  const least: string[] = [];
  for (const s of servers) if ((inflight[s] ?? 0) === min) least.push(s);
  const leastCount = least.length + (min === 0 ? unseen : 0);
  const holderSet = new Set(holders);
  const leastHolders = least.filter((s) => holderSet.has(s)).length;
  if (leastHolders === leastCount) return null;
  const loadOnly = leastHolders / leastCount;
  const uniform = holders.length / n;
  return {
    set: leastHolders === 0 ? 'away' : 'tie',
    holderChosen: holderSet.has(chosen),
    blindProbability: Math.max(loadOnly, uniform),
  };
}

/** Counts over one set of informative decisions. */
export interface PreferenceTally {
  readonly decisions: number;
  readonly holderChosen: number;
  /** Σ blindProbability: holders a blind router would have picked */
  readonly blindExpected: number;
}

/** Holder rate above the blind router's, per decision (0 without decisions). */
export function preferenceExcess(t: PreferenceTally): number {
  return t.decisions > 0 ? (t.holderChosen - t.blindExpected) / t.decisions : 0;
}
