// event-signal-masked: the KV-event path feeds nothing the router uses (events absent, polling skipped by design,
// a tokens_per_block mismatch, never polled) while the router still follows prefixes — from its own hashes
// (backfill, the newest router's routed-block tracking) or its conversation pin. The hit rate looks fine; what the
// events would add is lost, silently.
import type { Rule } from '../rule.js';
import { deadEventPath } from './event-path.js';
import { windowEvidence } from './rule-math.js';
import { followsPrefixes, routingEvidence } from './routing-evidence.js';

export const eventSignalMasked: Rule = {
  id: 'event-signal-masked',
  evaluate(input) {
    const dead = deadEventPath(input);
    const diag = input.servers.map((s) => s.eventMatchDiag);
    const calls = diag.reduce((n, e) => n + e.calls, 0);
    const totalMatched = diag.reduce((n, e) => n + e.totalMatched, 0);
    const eventMatched = diag.reduce((n, e) => n + e.eventMatched, 0);
    // EVENT_MATCH_DIAG: the router matched prefixes, none of them through event-fed blocks
    const diagMasked = calls >= 10 && totalMatched > 0 && eventMatched === 0;
    const routing = routingEvidence(input);
    const follows = followsPrefixes(routing);
    if (!diagMasked && !(dead !== null && follows)) return null;
    const keptBy =
      input.router.fillsOwnTable === true
        ? input.router.trackRoutedBlocks === true
          ? 'routed-block tracking (the newest router adds the hashes it routed on finish)'
          : 'backfill_block_hashes_on_finish (the router adds its own hashes on finish)'
        : "the router's own hashes or a conversation pin";
    const why = dead?.causes.join('; ') ?? "the router's EVENT_MATCH_DIAG lines show event_match = 0";
    return {
      servers: input.servers.map((s) => s.server),
      summary:
        `${why}, yet routing follows prefixes through ${keptBy}` +
        (diagMasked
          ? `: EVENT_MATCH_DIAG reports matches on ${totalMatched} of ${calls} calls, none from events`
          : follows
            ? `: ${routing.prefers[0] ?? routing.chanceLive[0] ?? ''}`
            : ''),
      evidence: {
        event_match_diag_calls: calls,
        event_match_diag_total_matched: totalMatched,
        event_match_diag_event_matched: eventMatched,
        event_blocks: diag.reduce((n, e) => n + (e.eventBlocks ?? 0), 0),
        router_profile: input.router.profile ?? 'unknown',
        router_fills_own_table: input.router.fillsOwnTable ?? 'unknown',
        ...routing.evidence,
        ...windowEvidence(input.window),
      },
      cause:
        "docs/trtllm-wire.md §7: the router's table is filled only with its own hashes of what it routed; lost are prefixes a server cached for " +
        'requests routed elsewhere (shared prefixes across trajectories), a warm table after a router restart, and evictions (the router keeps ' +
        'hashes the worker dropped and sends requests to prefixes no longer cached)',
      fix:
        dead !== null
          ? dead.restore.join('; ')
          : "make the router consume the workers' events: align router_args.tokens_per_block with the workers and enable their KV events",
    };
  },
};
