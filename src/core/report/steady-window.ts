// The steady-state window of a run that starts cold: the state's counters since start, taken once when the warm-up
// ends and again at the report, and their difference. Every trajectory's first turns miss and carry short prompts, so
// a hit ratio since a cold start understates the cluster's steady state; the difference counts only what the
// cluster did after the warm-up, from the same observations (the tables and the findings still read the whole run).
import type { SentinelSnapshot } from '../state/snapshot.js';
import { KvsentinelError } from '../errors.js';

/** The counters a steady-state window is measured from. */
export interface CounterMark {
  /** when it was taken, ms */
  readonly at: number;
  readonly requests: number;
  readonly promptTokens: number;
  readonly cachedTokens: number;
  readonly followupTurns: number;
  readonly stickyTurns: number;
}

export function counterMark(snapshot: SentinelSnapshot): CounterMark {
  let promptTokens = 0;
  let cachedTokens = 0;
  for (const s of snapshot.servers) {
    promptTokens += s.promptTokens;
    cachedTokens += s.cachedTokens;
  }
  return {
    at: snapshot.now,
    requests: snapshot.requests,
    promptTokens,
    cachedTokens,
    followupTurns: snapshot.decisions.followupTurns,
    stickyTurns: snapshot.decisions.stickyTurns,
  };
}

/** The audit report's `steady_state` block: the warm-up, then the window after it (JSON names, as the report's). */
export interface SteadyStateStats {
  /** requests the warm-up asked for, and what the counters held when it ended */
  readonly warmup_target_requests: number;
  readonly warmup_requests: number;
  readonly warmup_seconds: number;
  /** the window after the warm-up */
  readonly requests: number;
  readonly seconds: number;
  readonly cache_hit_ratio: number | null;
  readonly stickiness: number | null;
}

const round = (value: number, digits: number): number => Math.round(value * 10 ** digits) / 10 ** digits;

/**
 * The window from `warmedUp` to `end`; `startedAt` is when the traffic (and so the warm-up) began, ms.
 * Counters since start only grow, so a mark taken later than `end` is a caller's error.
 */
export function steadyStateStats(
  warmup: { readonly targetRequests: number; readonly startedAt: number },
  warmedUp: CounterMark,
  end: CounterMark,
): SteadyStateStats {
  if (end.at < warmedUp.at || end.requests < warmedUp.requests)
    throw new KvsentinelError(
      'internal',
      `steady-state window ends (${end.at}) before its warm-up did (${warmedUp.at})`,
    );
  const prompt = end.promptTokens - warmedUp.promptTokens;
  const followups = end.followupTurns - warmedUp.followupTurns;
  return {
    warmup_target_requests: warmup.targetRequests,
    warmup_requests: warmedUp.requests,
    warmup_seconds: round((warmedUp.at - warmup.startedAt) / 1000, 1),
    requests: end.requests - warmedUp.requests,
    seconds: round((end.at - warmedUp.at) / 1000, 1),
    cache_hit_ratio: prompt > 0 ? round((end.cachedTokens - warmedUp.cachedTokens) / prompt, 4) : null,
    stickiness: followups > 0 ? round((end.stickyTurns - warmedUp.stickyTurns) / followups, 4) : null,
  };
}
