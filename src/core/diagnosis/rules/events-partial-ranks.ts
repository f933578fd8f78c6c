// events-partial-ranks: an attention-DP server whose events come from only some of its ranks (the gather to rank 0
// loses the others): the router sees ~1/N of the blocks, and served requests reuse more than the events show.
import { withOwnTable } from './own-table-advice.js';
import type { Rule, ServerDiagnosis } from '../rule.js';
import { ratio, round3, windowEvidence } from './rule-math.js';

function missingRanks(server: ServerDiagnosis, widest: number): number[] {
  const seen = new Set(server.ranks.filter((r) => r.events > 0).map((r) => r.rank));
  const top = Math.max(widest, ...seen) + (seen.size > 0 ? 0 : 1);
  const missing: number[] = [];
  for (let rank = 0; rank < top; rank++) if (!seen.has(rank)) missing.push(rank);
  return missing;
}

export const eventsPartialRanks: Rule = {
  id: 'events-partial-ranks',
  evaluate(input) {
    if (!input.seesWorkerEvents) return null;
    const t = input.thresholds;
    const adp = input.servers.filter((s) => s.ranks.some((r) => r.stated && r.events > 0));
    if (adp.length === 0) return null;
    // the widest rank set any server shows is the attention-DP size the others should match
    const widest = Math.max(...adp.map((s) => s.ranks.filter((r) => r.events > 0).length));
    const hit: { server: ServerDiagnosis; missing: number[]; underReported: number }[] = [];
    for (const s of adp) {
      // a ZMQ stream has one publisher per rank and no `created` event: a silent rank is an idle one, and a rank
      // whose publisher is missing shows as source-unreachable (its socket never connects)
      if (s.streamed) continue;
      if (s.requests < t.minServerRequests || s.gaps >= t.minGaps) continue;
      const missing = missingRanks(s, widest);
      const underReported = ratio(s.realisedAboveOracle, s.joinedOutcomes);
      // events name attention_dp_rank only on attention-DP workers (size ≥ 2), so "rank 0 alone" means the other
      // ranks' events never arrive — once rank 0 has shown enough traffic for them to have had some
      const withEvents = s.ranks.filter((r) => r.events > 0);
      const rankZeroAlone =
        withEvents.length === 1 && withEvents[0]!.rank === 0 && withEvents[0]!.events >= t.minRankZeroEvents;
      // requests reusing unannounced blocks while every rank shows events is no evidence of a lost rank (events
      // drained after the request was routed look the same): the share is reported, never a reason on its own
      if (missing.length > 0 || rankZeroAlone) hit.push({ server: s, missing, underReported });
    }
    if (hit.length === 0) return null;
    const names = hit.map((h) => h.server.server);
    const ranksSeen = hit
      .map(
        (h) =>
          `${h.server.server}:${h.server.ranks
            .filter((r) => r.events > 0)
            .map((r) => r.rank)
            .join('+')}`,
      )
      .join(' ');
    const underReported = hit.reduce((n, h) => n + h.server.realisedAboveOracle, 0);
    const joined = hit.reduce((n, h) => n + h.server.joinedOutcomes, 0);
    return {
      servers: names,
      summary:
        `events of ${names.join(', ')} come from attention-DP ranks ${ranksSeen} only; ` +
        `${(ratio(underReported, joined) * 100).toFixed(0)}% of served requests reused blocks no event announced`,
      evidence: {
        ranks_with_events: ranksSeen,
        // rank 0 alone: the attention-DP size is unknown, so the missing ranks are 1..N-1
        missing_ranks: hit
          .map((h) => `${h.server.server}:${h.missing.length > 0 ? h.missing.join('+') : '1..N-1'}`)
          .join(' '),
        requests_reusing_unannounced_blocks: underReported,
        joined_requests: joined,
        unannounced_share: round3(ratio(underReported, joined)),
        ...windowEvidence(input.window),
      },
      cause:
        "docs/trtllm-wire.md §7.4: the attention-DP gather delivers only part of the ranks' events to rank 0's queue",
      fix:
        "deliver every attention-DP rank's events: a build whose gather reaches rank 0 (or per-rank publishing), " +
        withOwnTable(input, 'attention_dp_events_gather_period_ms > 0', '; until then '),
    };
  },
};
