// turn-scatter-high: too many follow-up turns land where their earlier turns are not cached (cached < 50% of input
// although an earlier turn of the trajectory was served) — the cost users see. Only turns routing scattered count:
// those whose previous server would have kept >= 50% cached (a young trajectory after a large tool output is
// under 50% wherever it goes; a short live run is full of them).
import type { Rule } from '../rule.js';
import { percent, ratio, round3, windowEvidence } from './rule-math.js';

export const turnScatterHigh: Rule = {
  id: 'turn-scatter-high',
  evaluate(input) {
    const t = input.thresholds;
    const d = input.decisions;
    if (d.followupsWithOutcome < t.minFollowups) return null;
    const scatter = ratio(d.scatteredByRouting, d.followupsWithOutcome);
    if (scatter <= t.maxTurnScatter) return null;
    return {
      servers: input.servers.map((s) => s.server),
      summary: `${percent(scatter)} of follow-up turns were scattered by routing (cached < 50% of input where their previous server held more), threshold ${percent(t.maxTurnScatter)}`,
      evidence: {
        followup_turns: d.followupsWithOutcome,
        scattered_turns: d.scattered,
        scattered_by_routing: d.scatteredByRouting,
        turn_scatter_by_routing_ratio: round3(scatter),
        threshold: t.maxTurnScatter,
        ...windowEvidence(input.window),
      },
      cause: 'trtllm-wire.md §7: follow-up turns are routed without regard to where their earlier turns are cached (see cache-signal-inert and its causes)',
      fix: 'apply the fixes of the cause findings; router_args.backfill_block_hashes_on_finish: true and a router_args.max_batch_size above the active requests per server cut scatter',
    };
  },
};
