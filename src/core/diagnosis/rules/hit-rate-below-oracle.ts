// hit-rate-below-oracle: the realised prefix-cache hit trails the best achievable — the oracle from worker truth
// (relay), or without it the sticky ideal (every follow-up back on its previous server, bounded by what that server
// can hold: a turn that went back counts what it reused, one that moved counts its earlier turn unless the server's
// capacity had evicted it since) — and what it costs.
import { withOwnTable } from './own-table-advice.js';
import type { DiagnosisInput, Rule } from '../rule.js';
import { percent, ratio, round3, windowEvidence, windowSeconds } from './rule-math.js';

/** The sticky ideal's bound in words: which turns it credited, and each server's capacity with its source. */
function stickyBound(input: DiagnosisInput): Record<string, string | number> {
  const d = input.decisions;
  const capacities = input.servers
    .map(
      (s) =>
        `${s.server} ${s.kvCapacity === null ? 'unknown' : `${s.kvCapacity.blocks} blocks (${s.kvCapacity.from})`}`,
    )
    .join(', ');
  return {
    oracle_bound:
      `turns back on their server: what it reused; ${d.stickyIdealMovedTurns} turns that moved: their earlier turn, ` +
      `${d.stickyIdealEvictedTurns} of them not (their server had stored more than its capacity since), ` +
      `${d.stickyIdealUnboundedTurns} unbounded (capacity unknown; --kv-capacity states it)`,
    kv_capacity: capacities,
    moved_turns: d.stickyIdealMovedTurns,
    moved_turns_evicted_by_capacity: d.stickyIdealEvictedTurns,
    moved_turns_unbounded: d.stickyIdealUnboundedTurns,
  };
}

export const hitRateBelowOracle: Rule = {
  id: 'hit-rate-below-oracle',
  evaluate(input) {
    const t = input.thresholds;
    const d = input.decisions;
    let realised: number;
    let best: number;
    let prompt: number;
    let basis: string;
    let bound: Record<string, string | number> = {};
    if (
      d.withKeys + d.withWorkerTokens >= t.minDecisions &&
      d.joinedPromptTokens > 0 &&
      input.seesWorkerEvents &&
      input.servers.some((s) => s.storedEvents > 0)
    ) {
      realised = d.joinedCachedTokens;
      best = d.joinedOracleCachedTokens;
      prompt = d.joinedPromptTokens;
      basis = 'worker truth (oracle-best server per request)';
    } else if (d.followupsWithOutcome >= t.minFollowups && d.stickyIdealPromptTokens > 0) {
      realised = d.cachedTokens;
      best = d.stickyIdealCachedTokens;
      prompt = d.stickyIdealPromptTokens;
      basis = 'sticky ideal (each follow-up on its previous server, bounded by its capacity)';
      bound = stickyBound(input);
    } else {
      return null;
    }
    const realisedRatio = ratio(realised, prompt);
    const bestRatio = ratio(best, prompt);
    if (bestRatio - realisedRatio <= t.maxHitRateGap) return null;
    const lostPerSecond = Math.max(0, best - realised) / windowSeconds(input.window);
    return {
      servers: input.servers.map((s) => s.server),
      summary: `prefix-cache hit ${percent(realisedRatio)} vs ${percent(bestRatio)} achievable: ${lostPerSecond.toFixed(0)} prompt tokens/s recomputed needlessly`,
      evidence: {
        realised_hit_ratio: round3(realisedRatio),
        oracle_hit_ratio: round3(bestRatio),
        oracle_basis: basis,
        ...bound,
        prompt_tokens: prompt,
        tokens_lost: Math.max(0, best - realised),
        tokens_lost_per_second: round3(lostPerSecond),
        ...windowEvidence(input.window),
      },
      cause:
        'docs/trtllm-wire.md §7: requests are not routed to the server holding their prefix (see cache-signal-inert, load-term-dominates and their causes)',
      fix: withOwnTable(input, 'apply the fixes of the cause findings', '; ', ' recovers most of the gap'),
    };
  },
};
