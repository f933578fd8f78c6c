// event-queue-shared: event_id jumps in what the sidecar drains — someone else drains the same destructive queue
// (or the worker's buffer overflows), so the router sees only part of the events. For a ZMQ stream the same
// evidence is a batch seq gap replay could not fill ("stream gaps"): nobody steals from a PUB socket, so the batches
// were dropped (the publisher's queue full, a failed send, a subscriber past its high-water mark) and every
// subscriber — the router's too — lost that KV-cache state.
import type { Rule, RuleHit, ServerDiagnosis } from '../rule.js';
import { mergeEvidence, ratio, round3, windowEvidence } from './rule-math.js';

function byRank(hit: readonly ServerDiagnosis[]): string {
  return hit
    .flatMap((s) => s.ranks.filter((r) => r.gaps > 0).map((r) => `${s.server}/rank${r.rank}:${r.gaps}`))
    .join(' ');
}

function pullGaps(hit: readonly ServerDiagnosis[]): RuleHit | null {
  if (hit.length === 0) return null;
  const gaps = hit.reduce((n, s) => n + s.gaps, 0);
  const missed = hit.reduce((n, s) => n + s.missedEvents, 0);
  const events = hit.reduce((n, s) => n + s.events, 0);
  const names = hit.map((s) => s.server);
  return {
    servers: names,
    summary: `${gaps} event_id gaps on ${names.join(', ')}: ${missed} events (${(ratio(missed, missed + events) * 100).toFixed(1)}%) were drained by another consumer`,
    evidence: {
      gaps,
      missed_events: missed,
      drained_events: events,
      missed_share: round3(ratio(missed, missed + events)),
      gaps_by_rank: byRank(hit),
    },
    cause:
      'docs/trtllm-wire.md §7.2: another consumer drains the same worker queue (POST /kv_cache_events is destructive); or the worker buffer overflowed',
    fix:
      `make the kvsentinel relay the only consumer of POST /kv_cache_events on ${names.join(', ')}: remove the other poller ` +
      '(second orchestrator replica, KvEventFanout/gRPC pump, Dynamo, a metrics poller) or set its context_servers.urls to the relay ports; ' +
      'if no other consumer exists, raise kv_cache_config.event_buffer_max_size on those workers',
  };
}

function streamGaps(hit: readonly ServerDiagnosis[]): RuleHit | null {
  if (hit.length === 0) return null;
  const gaps = hit.reduce((n, s) => n + s.gaps, 0);
  const lost = hit.reduce((n, s) => n + s.missedEvents, 0);
  const filled = hit.reduce((n, s) => n + s.streamBatchesFilled, 0);
  const names = hit.map((s) => s.server);
  return {
    servers: names,
    summary: `stream gaps: ${gaps} seq gaps on the ZMQ KV-event streams of ${names.join(', ')} lost ${lost} batches${filled > 0 ? ` (${filled} more were recovered by replay)` : ''}`,
    evidence: {
      stream_gaps: gaps,
      lost_batches: lost,
      replayed_batches: filled,
      stream_events: hit.reduce((n, s) => n + s.streamEvents, 0),
      gaps_by_rank: byRank(hit),
    },
    cause:
      'KV-event batches were dropped between publisher and subscribers (a full publisher queue, a failed send, or a subscriber past its ZMQ high-water mark): every subscriber, the router included, misses that KV-cache state',
    fix:
      `give the publishers of ${names.join(', ')} a replay_endpoint and pass it to kvsentinel (--zmq ID=ENDPOINT,replay=ENDPOINT) so gaps are refilled; ` +
      "raise the publisher's hwm and max_queue_size (kv_events_config / --kv-events-config), and make sure the router's subscriber resynchronizes on a gap",
  };
}

export const eventQueueShared: Rule = {
  id: 'event-queue-shared',
  evaluate(input) {
    if (!input.seesWorkerEvents) return null;
    const hit = input.servers.filter((s) => s.gaps >= input.thresholds.minGaps);
    if (hit.length === 0) return null;
    const parts = [pullGaps(hit.filter((s) => !s.streamed)), streamGaps(hit.filter((s) => s.streamed))].filter(
      (h): h is RuleHit => h !== null,
    );
    const evidence = { ...mergeEvidence(parts), ...windowEvidence(input.window) };
    return {
      servers: parts.flatMap((h) => h.servers),
      summary: parts.map((h) => h.summary).join('; '),
      evidence,
      cause: parts.map((h) => h.cause).join('; '),
      fix: parts.map((h) => h.fix).join('; '),
    };
  },
};
