// event-queue-shared: event_id jumps in what the sidecar drains — someone else drains the same destructive queue
// (or the worker's buffer overflows), so the router sees only part of the events.
import type { Rule } from '../rule.js';
import { ratio, round3, windowEvidence } from './rule-math.js';

export const eventQueueShared: Rule = {
  id: 'event-queue-shared',
  evaluate(input) {
    if (!input.seesWorkerEvents) return null;
    const hit = input.servers.filter((s) => s.gaps >= input.thresholds.minGaps);
    if (hit.length === 0) return null;
    const gaps = hit.reduce((n, s) => n + s.gaps, 0);
    const missed = hit.reduce((n, s) => n + s.missedEvents, 0);
    const events = hit.reduce((n, s) => n + s.events, 0);
    const names = hit.map((s) => s.server);
    const byRank = hit
      .flatMap((s) => s.ranks.filter((r) => r.gaps > 0).map((r) => `${s.server}/rank${r.rank}:${r.gaps}`))
      .join(' ');
    return {
      servers: names,
      summary: `${gaps} event_id gaps on ${names.join(', ')}: ${missed} events (${(ratio(missed, missed + events) * 100).toFixed(1)}%) were drained by another consumer`,
      evidence: {
        gaps,
        missed_events: missed,
        drained_events: events,
        missed_share: round3(ratio(missed, missed + events)),
        gaps_by_rank: byRank,
        ...windowEvidence(input.window),
      },
      cause: 'docs/trtllm-wire.md §7.2: another consumer drains the same worker queue (POST /kv_cache_events is destructive); or the worker buffer overflowed',
      fix:
        `make the kvsentinel relay the only consumer of POST /kv_cache_events on ${names.join(', ')}: remove the other poller ` +
        '(second orchestrator replica, KvEventFanout/gRPC pump, Dynamo, a metrics poller) or set its context_servers.urls to the relay ports; ' +
        'if no other consumer exists, raise kv_cache_config.event_buffer_max_size on those workers',
    };
  },
};
