// cache-signal-inert (the headline): routing is statistically independent of where the prefix is cached —
// predicted router matches ≡ 0 (under every chunk size the router may use, while its tokens_per_block is unknown)
// while worker truth shows reusable prefixes, or the chosen server is the oracle best
// no more often than chance, or (logs only) follow-up turns return to their previous server no more often than 1/N,
// or the router's debug endpoint reports no matched tokens at all.
import type { Rule } from '../rule.js';
import { renderDriftSummary } from './render-drift.js';
import { percent, ratio, round3, windowEvidence } from './rule-math.js';

export const cacheSignalInert: Rule = {
  id: 'cache-signal-inert',
  evaluate(input) {
    const t = input.thresholds;
    const d = input.decisions;
    const reasons: string[] = [];
    const evidence: Record<string, number | string | boolean> = {};

    if (input.router.consumesEvents && d.withKeys >= t.minDecisions) {
      const predicted = ratio(d.predictedAnyMatch, d.withKeys);
      const oracle = ratio(d.oracleAnyMatch, d.withKeys);
      evidence.decisions_with_keys = d.withKeys;
      evidence.predicted_match_share = round3(predicted);
      evidence.oracle_match_share = round3(oracle);
      // with the router's chunk size unknown, predictedAnyMatch counts a match under any size it may use: the
      // criterion then says "no size gives a match", never "the default size gives none"
      const unknown = input.router.tokensPerBlock === null;
      evidence.router_tokens_per_block = unknown ? `unknown (predicted under each of ${input.router.tokensPerBlockCandidates.join('/')})` : input.router.tokensPerBlock;
      if (!unknown) evidence.router_tokens_per_block_from = input.router.tokensPerBlockFrom ?? 'unknown';
      if (predicted <= t.predictedMatchMaxShare && oracle >= t.oracleMatchMinShare) {
        const sizes = unknown ? ` under every tokens_per_block it may use (${input.router.tokensPerBlockCandidates.join(', ')})` : '';
        reasons.push(`the router's table predicts a match for ${percent(predicted)} of decisions${sizes} while workers hold a prefix for ${percent(oracle)}`);
      }
    }
    const ranked = d.oracleBest + d.notOracleBest;
    if (ranked >= t.minDecisions) {
      const rate = ratio(d.oracleBest, ranked);
      // chance = picking servers blindly, uniformly or with their observed load shares (whichever is higher)
      const chance = Math.max(ratio(d.oracleBestByChance, ranked), ratio(d.oracleBestByLoadShare, ranked));
      evidence.oracle_best_rate = round3(rate);
      evidence.oracle_best_by_chance = round3(chance);
      if (rate <= chance + t.inertMargin) {
        reasons.push(`the chosen server held the longest prefix in ${percent(rate)} of decisions, chance gives ${percent(chance)}`);
      }
    }
    if (d.followups >= t.minFollowups && d.serverCount >= 2) {
      const stickiness = ratio(d.sticky, d.followups);
      // chance: 1/N with even load; Σ share² when the load shares are uneven (always ≥ 1/N)
      const chance = Math.max(1 / d.serverCount, d.stickinessByLoadShare);
      evidence.followup_turns = d.followups;
      evidence.stickiness = round3(stickiness);
      evidence.stickiness_by_chance = round3(chance);
      if (stickiness <= chance + t.inertMargin) {
        reasons.push(`follow-up turns returned to their previous server ${percent(stickiness)} of the time, chance (1/${d.serverCount} at even load, Σ share² here) gives ${percent(chance)}`);
      }
    }
    const rs = input.routerScores;
    if (input.router.consumesEvents && rs.decisions >= t.minDecisions) {
      const share = ratio(rs.anyMatch, rs.decisions);
      evidence.router_reported_decisions = rs.decisions;
      evidence.router_reported_match_share = round3(share);
      if (share <= t.predictedMatchMaxShare && ratio(d.followups, d.decisions) >= 0.2) {
        reasons.push(`the router reported matched_tokens > 0 for ${percent(share)} of ${rs.decisions} decisions`);
      }
    }
    if (reasons.length === 0) return null;
    // a render difference is a cause this rule can name itself: the router hashes other ids than the workers store
    const drift = renderDriftSummary(input);
    return {
      servers: input.servers.map((s) => s.server),
      summary: `routing ignores where prefixes are cached: ${reasons.join('; ')}`,
      evidence: { ...evidence, ...windowEvidence(input.window) },
      cause:
        drift !== null
          ? `docs/trtllm-wire.md §7.3: the router hashes other token ids than the workers store (${drift}), so its lookups miss and its score degrades to least-loaded`
          : 'docs/trtllm-wire.md §7: the router\'s per-server block table does not reflect the workers\' caches, so its score degrades to least-loaded; the other findings name the cause',
      fix:
        'apply the fixes of the findings that name the cause; meanwhile router_args.backfill_block_hashes_on_finish: true ' +
        '(fills the table with the router\'s own hashes), or router type: conversation',
    };
  },
};
