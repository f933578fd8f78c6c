// load-term-dominates: the score matched/padded − active/max_batch_size lets the load term outweigh the cache term —
// requests are sent away from the server holding their prefix, or the active requests per server exceed
// max_batch_size so no cache difference can win. Recommends a max_batch_size from the observed in-flight counts.
import type { Rule } from '../rule.js';
import { ratio, round3, roundUpTo, windowEvidence } from './rule-math.js';
import { DEFAULT_ROUTER_MAX_BATCH_SIZE } from '../../state/observation-digester.js';

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
      reasons.push(`${d.sentAwayByLoad} of ${d.withKeys} requests were sent away from a server predicted to hold ≥${Math.round(t.sentAwayCacheDelta * 100)}% more of their prompt`);
    }
    if (rs.decisions >= t.minDecisions && ratio(rs.sentAwayByLoad, rs.decisions) >= t.maxSentAwayShare) {
      reasons.push(`the router's scores sent ${rs.sentAwayByLoad} of ${rs.decisions} requests away from more matched tokens`);
    }
    const perServer = input.servers.map((s) => s.meanInflight).filter((v): v is number => v !== null);
    const meanActive = perServer.length > 0 ? perServer.reduce((a, b) => a + b, 0) / perServer.length : null;
    if (d.decisions >= t.minDecisions && meanActive !== null && meanActive >= t.activeOverBatchFactor * mbs) {
      reasons.push(`servers run ${meanActive.toFixed(0)} active requests on average, ≫ max_batch_size ${mbs}: the load term (${(meanActive / mbs).toFixed(1)}) dwarfs any cache term (≤ 1)`);
    }
    if (reasons.length === 0) return null;
    // a cache advantage of a quarter of the prompt must beat the typical load difference: mbs ≥ 4 × the busiest server
    const basis = d.meanMaxInflight ?? meanActive;
    const recommended = basis !== null ? roundUpTo(4 * basis, 64) : mbs * 8;
    return {
      servers: input.servers.map((s) => s.server),
      summary: reasons.join('; '),
      evidence: {
        max_batch_size: mbs,
        max_batch_size_from: input.router.maxBatchSize === null ? 'TensorRT-LLM default' : (input.router.source ?? 'config'),
        mean_active_per_server: meanActive === null ? 'unknown' : round3(meanActive),
        mean_busiest_server_active: d.meanMaxInflight === null ? 'unknown' : round3(d.meanMaxInflight),
        peak_active: d.peakInflight ?? 'unknown',
        sent_away_by_load: d.sentAwayByLoad,
        load_spread_over_cache_delta: d.loadSpreadOverCacheDelta,
        decisions_with_inflight: d.inflightReports,
        decisions: d.decisions,
        ...windowEvidence(input.window),
      },
      cause: 'docs/trtllm-wire.md §1.4: score = matched/padded − active_requests/max_batch_size; with max_batch_size far below the active requests the load term decides',
      fix: `router_args.max_batch_size: ${recommended} (4 × the ${basis === null ? 'assumed' : 'observed'} active requests of the busiest server)`,
    };
  },
};
