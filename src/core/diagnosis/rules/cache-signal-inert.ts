// cache-signal-inert (the headline): routing is statistically independent of where the prefix is cached.
// Behaviour decides first (holder-preference.ts): on decisions where a router blind to the cache would pick the
// prefix holder with a known probability (from the in-flight counts at decision time), does the router pick it
// more often? Any set that shows a preference clears the router, whatever the traffic shape — a cache-aware router
// that sends everything to one server is not inert (that is load-concentrated). Without load reports (logs only),
// the oracle-best rate and stickiness are compared with uniform / load-share chance, judged only where chance
// leaves room to tell. Model evidence (predicted router matches ≡ 0, router-reported matches ≡ 0) supports the
// verdict but never overrides a router that visibly follows prefixes.
import { preferenceExcess, type PreferenceTally } from '../holder-preference.js';
import type { DiagnosisInput, Rule } from '../rule.js';
import { percent, ratio, round3, windowEvidence } from './rule-math.js';

type Evidence = Record<string, number | string | boolean>;

interface Behaviour {
  /** sets where the router picked holders more often than a blind router */
  readonly prefers: string[];
  /** sets with enough decisions and no preference */
  readonly indifferent: string[];
  readonly indifferentDecisions: number;
}

const HOLDERS = { truth: 'the server holding the longest prefix', turn: 'the server of the previous turn' } as const;
const SETS = { away: 'busier than the least-loaded server', tie: 'among the least-loaded servers' } as const;

function behaviour(input: DiagnosisInput, evidence: Evidence): Behaviour {
  const t = input.thresholds;
  const out: Behaviour = { prefers: [], indifferent: [], indifferentDecisions: 0 };
  let indifferentDecisions = 0;
  for (const holder of ['truth', 'turn'] as const) {
    for (const set of ['away', 'tie'] as const) {
      const tally: PreferenceTally = input.decisions.preference[holder][set];
      if (tally.decisions < t.minPreferenceDecisions) continue;
      const rate = ratio(tally.holderChosen, tally.decisions);
      const blind = ratio(tally.blindExpected, tally.decisions);
      evidence[`${holder}_${set}_decisions`] = tally.decisions;
      evidence[`${holder}_${set}_holder_rate`] = round3(rate);
      evidence[`${holder}_${set}_blind_rate`] = round3(blind);
      const text = `on ${tally.decisions} decisions where ${HOLDERS[holder]} was ${SETS[set]}, the router chose it ${percent(rate)} of the time, a router blind to the cache ${percent(blind)}`;
      if (preferenceExcess(tally) > t.inertMargin) out.prefers.push(text);
      else {
        out.indifferent.push(text);
        indifferentDecisions += tally.decisions;
      }
    }
  }
  return { ...out, indifferentDecisions };
}

/** Logs-only fallback: chance models from load shares, judged only where chance + margin leaves room below 1. */
function chanceReasons(input: DiagnosisInput, evidence: Evidence): string[] {
  const t = input.thresholds;
  const d = input.decisions;
  const reasons: string[] = [];
  const judgeable = (chance: number): boolean => chance + 2 * t.inertMargin <= 1;
  const ranked = d.oracleBest + d.notOracleBest;
  if (ranked >= t.minDecisions) {
    const rate = ratio(d.oracleBest, ranked);
    const chance = Math.max(ratio(d.oracleBestByChance, ranked), ratio(d.oracleBestByLoadShare, ranked));
    evidence.oracle_best_rate = round3(rate);
    evidence.oracle_best_by_chance = round3(chance);
    if (judgeable(chance) && rate <= chance + t.inertMargin) {
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
    if (judgeable(chance) && stickiness <= chance + t.inertMargin) {
      reasons.push(`follow-up turns returned to their previous server ${percent(stickiness)} of the time, chance (1/${d.serverCount} at even load, Σ share² here) gives ${percent(chance)}`);
    }
  }
  return reasons;
}

/** Model evidence: what our replica of the router's table, or the router itself, says it matched. */
function modelReasons(input: DiagnosisInput, evidence: Evidence): string[] {
  const t = input.thresholds;
  const d = input.decisions;
  const reasons: string[] = [];
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
  const rs = input.routerScores;
  if (input.router.consumesEvents && rs.decisions >= t.minDecisions) {
    const share = ratio(rs.anyMatch, rs.decisions);
    evidence.router_reported_decisions = rs.decisions;
    evidence.router_reported_match_share = round3(share);
    if (share <= t.predictedMatchMaxShare && ratio(d.followups, d.decisions) >= 0.2) {
      reasons.push(`the router reported matched_tokens > 0 for ${percent(share)} of ${rs.decisions} decisions`);
    }
  }
  return reasons;
}

export const cacheSignalInert: Rule = {
  id: 'cache-signal-inert',
  evaluate(input) {
    const evidence: Evidence = {};
    const seen = behaviour(input, evidence);
    // a router that visibly follows prefixes is not inert, whatever our model of its table says
    if (seen.prefers.length > 0) return null;
    const model = modelReasons(input, evidence);
    let reasons: string[];
    // too few informative decisions (or no load reports): the chance models of the logs-only path
    if (seen.indifferentDecisions >= input.thresholds.minDecisions) reasons = [...seen.indifferent, ...model];
    else reasons = [...chanceReasons(input, evidence), ...model];
    if (reasons.length === 0) return null;
    return {
      servers: input.servers.map((s) => s.server),
      summary: `routing ignores where prefixes are cached: ${reasons.join('; ')}`,
      evidence: { ...evidence, ...windowEvidence(input.window) },
      cause: 'docs/trtllm-wire.md §7: the router\'s per-server block table does not reflect the workers\' caches, so its score degrades to least-loaded; the other findings name the cause',
      fix:
        'apply the fixes of the findings that name the cause; meanwhile router_args.backfill_block_hashes_on_finish: true ' +
        '(fills the table with the router\'s own hashes), or router type: conversation',
    };
  },
};
