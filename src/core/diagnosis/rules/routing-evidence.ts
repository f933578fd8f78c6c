// What the window shows about whether routing follows prefixes, shared by cache-signal-inert (routing ignores them),
// evidence-insufficient (nothing shows either way) and event-signal-masked (it follows them without the events).
// Behaviour first (holder-preference.ts, needs in-flight counts); without enough of it, the logs-only chance models
// (oracle-best rate, stickiness), judged only where chance leaves room below 1.
import { preferenceExcess } from '../holder-preference.js';
import type { DiagnosisInput } from '../rule.js';
import { percent, ratio, round3 } from './rule-math.js';

export type Evidence = Record<string, number | string | boolean>;

export interface RoutingEvidence {
  /** behavioural sets where the router picked holders more often than a blind router */
  readonly prefers: readonly string[];
  /** behavioural sets with enough decisions and no preference */
  readonly indifferent: readonly string[];
  readonly indifferentDecisions: number;
  /** behaviour decides (enough indifferent decisions, or a preference) — else the chance models do */
  readonly behaviourDecides: boolean;
  /** chance models: above chance / at chance / not judgeable (chance too close to 1) */
  readonly chanceLive: readonly string[];
  readonly chanceBlind: readonly string[];
  readonly chanceUnjudgeable: readonly string[];
  readonly evidence: Evidence;
}

const HOLDERS = { truth: 'the server holding the longest prefix', turn: 'the server of the previous turn' } as const;
const SETS = { away: 'busier than the least-loaded server', tie: 'among the least-loaded servers' } as const;

export function routingEvidence(input: DiagnosisInput): RoutingEvidence {
  const t = input.thresholds;
  const d = input.decisions;
  const evidence: Evidence = {};
  const prefers: string[] = [];
  const indifferent: string[] = [];
  let indifferentDecisions = 0;
  for (const holder of ['truth', 'turn'] as const) {
    for (const set of ['away', 'tie'] as const) {
      const tally = d.preference[holder][set];
      if (tally.decisions < t.minPreferenceDecisions) continue;
      const rate = ratio(tally.holderChosen, tally.decisions);
      const blind = ratio(tally.blindExpected, tally.decisions);
      evidence[`${holder}_${set}_decisions`] = tally.decisions;
      evidence[`${holder}_${set}_holder_rate`] = round3(rate);
      evidence[`${holder}_${set}_blind_rate`] = round3(blind);
      const text = `on ${tally.decisions} decisions where ${HOLDERS[holder]} was ${SETS[set]}, the router chose it ${percent(rate)} of the time, a router blind to the cache ${percent(blind)}`;
      if (preferenceExcess(tally) > t.inertMargin) prefers.push(text);
      else {
        indifferent.push(text);
        indifferentDecisions += tally.decisions;
      }
    }
  }
  const behaviourDecides = prefers.length > 0 || indifferentDecisions >= t.minDecisions;
  const chanceLive: string[] = [];
  const chanceBlind: string[] = [];
  const chanceUnjudgeable: string[] = [];
  const judge = (rate: number, chance: number, blindText: string, liveText: string, what: string): void => {
    if (chance + 2 * t.inertMargin > 1)
      chanceUnjudgeable.push(`${what}: chance is ${percent(chance)} at these load shares, too close to 100% to tell`);
    else if (rate <= chance + t.inertMargin) chanceBlind.push(blindText);
    else chanceLive.push(liveText);
  };
  const ranked = d.oracleBest + d.notOracleBest;
  if (ranked >= t.minDecisions) {
    const rate = ratio(d.oracleBest, ranked);
    const chance = Math.max(ratio(d.oracleBestByChance, ranked), ratio(d.oracleBestByLoadShare, ranked));
    evidence.oracle_best_rate = round3(rate);
    evidence.oracle_best_by_chance = round3(chance);
    const text = `the chosen server held the longest prefix in ${percent(rate)} of decisions, chance gives ${percent(chance)}`;
    judge(rate, chance, text, text, 'oracle-best rate');
  }
  if (d.followups >= t.minFollowups && d.serverCount >= 2) {
    const stickiness = ratio(d.sticky, d.followups);
    // chance: 1/N with even load; Σ share² when the load shares are uneven (always ≥ 1/N)
    const chance = Math.max(1 / d.serverCount, d.stickinessByLoadShare);
    evidence.followup_turns = d.followups;
    evidence.stickiness = round3(stickiness);
    evidence.stickiness_by_chance = round3(chance);
    const text = `follow-up turns returned to their previous server ${percent(stickiness)} of the time, chance (1/${d.serverCount} at even load, Σ share² here) gives ${percent(chance)}`;
    judge(stickiness, chance, text, text, 'stickiness');
  }
  return {
    prefers,
    indifferent,
    indifferentDecisions,
    behaviourDecides,
    chanceLive,
    chanceBlind,
    chanceUnjudgeable,
    evidence,
  };
}

/** Routing visibly follows prefixes: a behavioural preference, or (behaviour undecided) a chance model above chance. */
export function followsPrefixes(e: RoutingEvidence): boolean {
  return e.prefers.length > 0 || (!e.behaviourDecides && e.chanceLive.length > 0);
}

/** Routing visibly ignores prefixes: behaviour indifferent on enough decisions, or (behaviour undecided) chance models at chance. */
export function ignoresPrefixes(e: RoutingEvidence): readonly string[] {
  if (followsPrefixes(e)) return [];
  return e.behaviourDecides ? e.indifferent : e.chanceBlind;
}
