// turn-scatter-high: too many follow-up turns land where their earlier turns are not cached (cached < 50% of input
// although an earlier turn of the trajectory was served) — the cost users see.
import type { Rule } from '../rule.js';
import { percent, ratio, round3, windowEvidence } from './rule-math.js';

export const turnScatterHigh: Rule = {
  id: 'turn-scatter-high',
  evaluate(input) {
    const t = input.thresholds;
    const d = input.decisions;
    if (d.followupsWithOutcome < t.minFollowups) return null;
    const scatter = ratio(d.scattered, d.followupsWithOutcome);
    // scatter that no routing could have avoided (the prefix was evicted everywhere) is capacity, not routing
    const avoidable = ratio(d.avoidableScattered, d.followupsWithOutcome);
    if (scatter <= t.maxTurnScatter || avoidable <= t.maxTurnScatter) return null;
    return {
      servers: input.servers.map((s) => s.server),
      summary: `${percent(scatter)} of follow-up turns were scattered (cached < 50% of input), threshold ${percent(t.maxTurnScatter)}`,
      evidence: {
        followup_turns: d.followupsWithOutcome,
        scattered_turns: d.scattered,
        turn_scatter_ratio: round3(scatter),
        avoidable_scatter_ratio: round3(avoidable),
        threshold: t.maxTurnScatter,
        ...windowEvidence(input.window),
      },
      cause:
        'docs/trtllm-wire.md §7: follow-up turns are routed without regard to where their earlier turns are cached (see cache-signal-inert and its causes)',
      fix: 'apply the fixes of the cause findings; router_args.backfill_block_hashes_on_finish: true and a router_args.max_batch_size above the active requests per server cut scatter',
    };
  },
};
