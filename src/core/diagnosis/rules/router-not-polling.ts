// router-not-polling: a router that reads the pull endpoint finished requests on a server but never asked the relay
// for its events (the older finish_request-without-session path): its table is never filled and nothing is logged.
// Judged by the router's kind: one that reads no events is never asked to poll, one whose kind is unknown and that
// never polled anything gets a warning, and a server the newest router skips by design is not a polling fault.
import type { Rule, RuleHit } from '../rule.js';
import { windowEvidence } from './rule-math.js';

export const routerNotPolling: Rule = {
  id: 'router-not-polling',
  evaluate(input) {
    if (!input.seesWorkerEvents || !input.router.consumesEvents || !input.routerPollsExpected) return null;
    // a server read only through its ZMQ stream has no pull path for the router to poll; one the newest router
    // skips by design (its tokens_per_block mismatch line) is tokens-per-block-mismatch's, not a polling fault
    const hit = input.servers.filter(
      (s) =>
        s.outcomes >= input.thresholds.minServerRequests &&
        s.routerPolls === 0 &&
        !(s.streamed && s.drains === 0) &&
        s.pollingSkipped === null,
    );
    if (hit.length === 0) return null;
    const names = hit.map((s) => s.server);
    const finished = hit.reduce((n, s) => n + s.outcomes, 0);
    const evidence = {
      finished_requests: finished,
      router_polls: 0,
      router_polls_since_start: hit.reduce((n, s) => n + s.routerPollsTotal, 0),
      poll_failures: hit.reduce((n, s) => n + s.pollFailures, 0),
      events_waiting: hit.reduce((n, s) => n + s.events, 0),
      router_reads_events: input.router.readsEvents ?? 'unknown',
      ...windowEvidence(input.window),
    };
    const neverPolled = input.servers.every((s) => s.routerPollsTotal === 0);
    if (input.router.readsEvents === null && neverPolled) return unknownKind(names, finished, evidence);
    return {
      servers: names,
      summary: `the router finished ${finished} requests on ${names.join(', ')} but never polled their events`,
      evidence,
      cause:
        'docs/trtllm-wire.md §7.6: finish_request without a session and a router that polls only with one → zero polls, zero logs' +
        (input.router.profile === null
          ? ' (or the newest router skipping polls on a tokens_per_block mismatch: its WARNING line "skipping event polling" says so; give --orchestrator-log to tell)'
          : ''),
      fix:
        "upgrade the orchestrator so finish_request polls with the router's own session (newer router.py poll_and_update)" +
        (input.router.profile === 'newest'
          ? ''
          : '; until then router_args.backfill_block_hashes_on_finish: true (the 2026-06 router; the newest ignores it and tracks routed blocks itself)'),
    };
  },
};

/**
 * No server was ever polled and nothing says what kind of router runs: a ConversationRouter, round-robin or
 * load-balancing router reads no events by design, a KvCacheAwareRouter that never polls is blind. Not critical
 * until the kind is known.
 */
function unknownKind(names: string[], finished: number, evidence: Record<string, string | number>): RuleHit {
  return {
    servers: names,
    severity: 'warning',
    summary:
      `the router finished ${finished} requests on ${names.join(', ')} and never polled any server's events: ` +
      'a ConversationRouter, round-robin or load-balancing router reads none by design; a KvCacheAwareRouter that never polls routes blind',
    evidence,
    cause:
      'the router kind is unknown (no router.type in the configuration, no debug endpoint, no log line that names it); ' +
      'docs/trtllm-wire.md §7.6 for a KvCacheAwareRouter: finish_request without a session → zero polls, zero logs; ' +
      'or the newest router skipping polls on a tokens_per_block mismatch (its WARNING line says so; give --orchestrator-log)',
    fix:
      'state the router in the configuration (router.type: conversation | round_robin | load_balancing | kv_cache_aware, or router.reads_events: none | pull | stream); ' +
      "for a KvCacheAwareRouter, an orchestrator whose finish_request polls with the router's own session",
  };
}
