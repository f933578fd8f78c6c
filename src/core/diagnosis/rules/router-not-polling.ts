// router-not-polling: in relay mode the router finished requests on a server but never asked the relay for its
// events (the older finish_request-without-session path): its table is never filled and nothing is logged.
import type { Rule } from '../rule.js';
import { windowEvidence } from './rule-math.js';

export const routerNotPolling: Rule = {
  id: 'router-not-polling',
  evaluate(input) {
    if (!input.seesWorkerEvents || !input.router.consumesEvents || !input.routerPollsExpected) return null;
    // a server read only through its ZMQ stream has no pull path for the router to poll
    const hit = input.servers.filter(
      (s) => s.outcomes >= input.thresholds.minServerRequests && s.routerPolls === 0 && !(s.streamed && s.drains === 0),
    );
    if (hit.length === 0) return null;
    const names = hit.map((s) => s.server);
    const finished = hit.reduce((n, s) => n + s.outcomes, 0);
    // the newest router says so when it skips polling by design (tokens_per_block mismatch): a different cause and fix
    const skipped = hit.find((s) => s.pollingSkipped !== null)?.pollingSkipped ?? null;
    if (skipped !== null) {
      return {
        servers: names,
        summary: `the router finished ${finished} requests on ${names.join(', ')} but never polled their events: it skips polling by design (its log: tokens_per_block mismatch, router=${skipped.routerTokensPerBlock} worker=${skipped.workerTokensPerBlock})`,
        evidence: {
          finished_requests: finished,
          router_polls: 0,
          router_tokens_per_block: skipped.routerTokensPerBlock,
          worker_tokens_per_block: skipped.workerTokensPerBlock,
          polling: 'skipped by design',
          ...windowEvidence(input.window),
        },
        cause:
          'docs/trtllm-wire.md §5: the newest router skips event polling on servers whose tokens_per_block differs from its own and relies on routed-block tracking (not a missing session)',
        fix: `leave router_args.tokens_per_block unset (the router adopts the worker's ${skipped.workerTokensPerBlock}) or set it to ${skipped.workerTokensPerBlock}; unset TRTLLM_KVCACHE_AWARE_ROUTER_HASH_TOKENS_PER_BLOCK`,
      };
    }
    return {
      servers: names,
      summary: `the router finished ${finished} requests on ${names.join(', ')} but never polled their events`,
      evidence: {
        finished_requests: finished,
        router_polls: 0,
        router_polls_since_start: hit.reduce((n, s) => n + s.routerPollsTotal, 0),
        poll_failures: hit.reduce((n, s) => n + s.pollFailures, 0),
        events_waiting: hit.reduce((n, s) => n + s.events, 0),
        ...windowEvidence(input.window),
      },
      cause:
        'docs/trtllm-wire.md §7.6: finish_request without a session and a router that polls only with one → zero polls, zero logs' +
        (input.router.profile === null
          ? ' (or the newest router skipping polls on a tokens_per_block mismatch: its WARNING line "skipping event polling" says so; give --orchestrator-log to tell)'
          : ''),
      fix:
        "upgrade the orchestrator so finish_request polls with the router's own session (newer router.py poll_and_update); " +
        'until then router_args.backfill_block_hashes_on_finish: true',
    };
  },
};
