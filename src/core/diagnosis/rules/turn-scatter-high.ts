// turn-scatter-high: too many follow-up turns land where their earlier turns are not cached (cached < 50% of input
// although an earlier turn of the trajectory was served) — the cost users see. Only scatter routing could have
// avoided counts, by the same oracle as hit-rate-below-oracle: a turn whose prefix no server held (evicted
// everywhere, or its server's capacity evicted it) is capacity, not routing; and only when it costs real prefill.
import { ownTableSetting, streamEngineDeployment } from './own-table-advice.js';
import type { Rule } from '../rule.js';
import { percent, ratio, round3, windowEvidence, windowSeconds } from './rule-math.js';

export const turnScatterHigh: Rule = {
  id: 'turn-scatter-high',
  evaluate(input) {
    const t = input.thresholds;
    const d = input.decisions;
    if (d.followupsWithOutcome < t.minFollowups) return null;
    const scatter = ratio(d.scattered, d.followupsWithOutcome);
    const avoidable = ratio(d.avoidableScattered, d.followupsWithOutcome);
    const costShare = ratio(d.avoidableScatterLostTokens, d.followupPromptTokens);
    if (scatter <= t.maxTurnScatter || avoidable <= t.maxTurnScatter || costShare <= t.minScatterCostShare) return null;
    const lostPerSecond = d.avoidableScatterLostTokens / windowSeconds(input.window);
    return {
      servers: input.servers.map((s) => s.server),
      summary:
        `${percent(scatter)} of follow-up turns were scattered (cached < 50% of input), ${percent(avoidable)} where a server held ` +
        `at least half their prompt: ${lostPerSecond.toFixed(0)} prompt tokens/s recomputed needlessly (threshold ${percent(t.maxTurnScatter)})`,
      evidence: {
        followup_turns: d.followupsWithOutcome,
        scattered_turns: d.scattered,
        turn_scatter_ratio: round3(scatter),
        avoidable_scattered_turns: d.avoidableScattered,
        avoidable_scatter_ratio: round3(avoidable),
        // the avoidable turns' oracle − realised, part of what hit-rate-below-oracle counts as lost
        avoidable_tokens_lost: d.avoidableScatterLostTokens,
        avoidable_tokens_lost_per_second: round3(lostPerSecond),
        avoidable_cost_share: round3(costShare),
        threshold: t.maxTurnScatter,
        cost_threshold: t.minScatterCostShare,
        ...windowEvidence(input.window),
      },
      cause:
        'docs/trtllm-wire.md §7: follow-up turns are routed without regard to where their earlier turns are cached (see cache-signal-inert and its causes)',
      fix: `apply the fixes of the cause findings; ${[
        ownTableSetting(input),
        streamEngineDeployment(input)
          ? 'a router whose load term does not outweigh its cache term'
          : 'a router_args.max_batch_size above the active requests per server',
      ]
        .filter((x) => x !== null)
        .join(' and ')} cut scatter`,
    };
  },
};
