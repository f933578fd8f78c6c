// load-term-dominates: the score matched/padded − active/max_batch_size lets the load term outweigh the cache term —
// requests are sent away from the server holding their prefix, or the active requests per server exceed
// max_batch_size so no cache difference can win. Recommends a max_batch_size from the observed in-flight counts.
import type { Rule } from '../rule.js';
import { preferenceExcess } from '../holder-preference.js';
import type { DiagnosisInput } from '../rule.js';
import { ratio, round3, roundUpTo, windowEvidence } from './rule-math.js';
import { DEFAULT_ROUTER_MAX_BATCH_SIZE } from '../router-defaults.js';

export const loadTermDominates: Rule = {
  id: 'load-term-dominates',
  evaluate(input) {
    if (!input.router.consumesEvents) return null;
    const t = input.thresholds;
    const d = input.decisions;
    const rs = input.routerScores;
    const mbs = input.router.maxBatchSize ?? DEFAULT_ROUTER_MAX_BATCH_SIZE;
    const reasons: string[] = [];
    if (d.withKeys >= t.minDecisions && ratio(d.sentAwayByLoad, d.withKeys) >= t.maxSentAwayShare) {
      reasons.push(
        `${d.sentAwayByLoad} of ${d.withKeys} requests were sent away from a server predicted to hold ≥${Math.round(t.sentAwayCacheDelta * 100)}% more of their prompt`,
      );
    }
    if (rs.decisions >= t.minDecisions && ratio(rs.sentAwayByLoad, rs.decisions) >= t.maxSentAwayShare) {
      reasons.push(
        `the router's scores sent ${rs.sentAwayByLoad} of ${rs.decisions} requests away from more matched tokens`,
      );
    }
    const perServer = input.servers.map((s) => s.meanInflight).filter((v): v is number => v !== null);
    const meanActive = perServer.length > 0 ? perServer.reduce((a, b) => a + b, 0) / perServer.length : null;
    if (d.decisions >= t.minDecisions && meanActive !== null && meanActive >= t.activeOverBatchFactor * mbs) {
      reasons.push(
        `servers run ${meanActive.toFixed(0)} active requests on average, ≫ max_batch_size ${mbs}: the load term (${(meanActive / mbs).toFixed(1)}) dwarfs any cache term (≤ 1)`,
      );
    }
    // behaviour: the router follows prefixes when loads tie and never when the holder is busier — the load term decides
    const away =
      d.preference.truth.away.decisions >= t.minPreferenceDecisions ? d.preference.truth.away : d.preference.turn.away;
    const tie =
      d.preference.truth.tie.decisions >= t.minPreferenceDecisions ? d.preference.truth.tie : d.preference.turn.tie;
    if (
      away.decisions >= t.minPreferenceDecisions &&
      tie.decisions >= t.minPreferenceDecisions &&
      preferenceExcess(away) <= t.inertMargin &&
      preferenceExcess(tie) > t.inertMargin
    ) {
      reasons.push(
        `the router picked the prefix holder on ${Math.round((100 * tie.holderChosen) / tie.decisions)}% of ${tie.decisions} decisions where loads tied, ` +
          `but on ${Math.round((100 * away.holderChosen) / away.decisions)}% of ${away.decisions} where the holder was busier`,
      );
    }
    if (reasons.length === 0) return null;
    const basis = d.meanMaxInflight ?? meanActive;
    const fix = knobFix(input, basis, mbs);
    return {
      servers: input.servers.map((s) => s.server),
      summary: reasons.join('; '),
      evidence: {
        max_batch_size: mbs,
        max_batch_size_from:
          input.router.maxBatchSize === null ? 'TensorRT-LLM default' : (input.router.source ?? 'config'),
        router_profile: input.router.profile ?? 'unknown (2026-06 score assumed)',
        load_weight: input.router.loadWeight ?? 'n/a',
        mean_active_per_server: meanActive === null ? 'unknown' : round3(meanActive),
        mean_busiest_server_active: d.meanMaxInflight === null ? 'unknown' : round3(d.meanMaxInflight),
        peak_active: d.peakInflight ?? 'unknown',
        sent_away_by_load: d.sentAwayByLoad,
        load_spread_over_cache_delta: d.loadSpreadOverCacheDelta,
        decisions_with_inflight: d.inflightReports,
        decisions: d.decisions,
        ...windowEvidence(input.window),
      },
      cause:
        input.router.profile === 'newest'
          ? 'docs/trtllm-wire.md §5: the newest router scores matches/tokens_per_block − load_weight·active; with load_weight large against the matched blocks the load term decides'
          : 'docs/trtllm-wire.md §1.4: score = matched/padded − active_requests/max_batch_size; with max_batch_size far below the active requests the load term decides',
      fix,
    };
  },
};

/**
 * The profile's knob with a computed value: a cache advantage of a quarter of the prompt must outweigh the load of
 * the busiest server. 2026-06: max_batch_size ≥ 4 × busiest. Newest: load_weight · busiest ≤ ¼ of the prompt's blocks.
 */
function knobFix(input: DiagnosisInput, busiest: number | null, mbs: number): string {
  const d = input.decisions;
  if (input.router.profile === 'newest') {
    const tpb = input.router.blockSize?.tokens ?? 128;
    const meanPrompt = d.withOutcome > 0 ? d.promptTokens / d.withOutcome : null;
    const lw = input.router.loadWeight ?? 0.25;
    if (meanPrompt === null || busiest === null || busiest <= 0)
      return `a smaller router_args.load_weight (now ${lw}), or router_args.load_cap to keep servers from overload instead`;
    const value = Math.max(0.001, Math.floor((1000 * (0.25 * meanPrompt)) / tpb / busiest) / 1000);
    return `router_args.load_weight: ${value} (now ${lw}: a quarter of a mean ${Math.round(meanPrompt)}-token prompt is ${Math.round((0.25 * meanPrompt) / tpb)} blocks of ${tpb}, which must outweigh load_weight × the ${busiest.toFixed(0)} active requests of the busiest server)`;
  }
  const recommended = busiest !== null ? roundUpTo(4 * busiest, 64) : mbs * 8;
  return `router_args.max_batch_size: ${recommended} (4 × the ${busiest === null ? 'assumed' : 'observed'} active requests of the busiest server)`;
}
