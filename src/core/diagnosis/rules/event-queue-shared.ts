// event-queue-shared: event_id jumps in what the sidecar drains — someone else drains the same destructive queue
// (or the worker's buffer overflows), so the router sees only part of the events; or the drains stopped bringing
// any event while the server kept storing new blocks (another consumer now takes the whole queue, so no later
// event_id shows the jump). For a ZMQ stream the same evidence is a batch seq gap replay could not fill ("stream
// gaps"): nobody steals from a PUB socket, so the batches were dropped (the publisher's queue full, a failed send,
// a subscriber past its high-water mark) and every subscriber — the router's too — lost that KV-cache state. One
// such gap already leaves the tables missing state (a warning); repeated gaps are critical, as stolen events are.
// Gaps the sidecar's own lag explains are left out: they are sidecar-lagging's, never the deployment's.
import type { DiagnosisInput, Rule, RuleHit, ServerDiagnosis } from '../rule.js';
import { mergeEvidence, ratio, round3, windowEvidence } from './rule-math.js';

/** the server's gaps less those the sidecar's own lag explains (sidecar-lagging) */
function withoutSidecarGaps(s: ServerDiagnosis): ServerDiagnosis {
  if (s.sidecarGaps === 0) return s;
  return {
    ...s,
    gaps: Math.max(0, s.gaps - s.sidecarGaps),
    missedEvents: Math.max(0, s.missedEvents - s.sidecarMissed),
  };
}

function byRank(hit: readonly ServerDiagnosis[]): string {
  return hit
    .flatMap((s) => s.ranks.filter((r) => r.gaps > 0).map((r) => `${s.server}/rank${r.rank}:${r.gaps}`))
    .join(' ');
}

/**
 * The drains stopped bringing events: none for sourceDownMs while the server stored new blocks for enough requests.
 * Not while the sidecar's own reads of that pull path fail (then the sidecar is to blame: source-unreachable).
 */
function streamTaken(input: DiagnosisInput, s: ServerDiagnosis): boolean {
  const t = input.thresholds;
  const readsFail = input.sources.some(
    (src) => !src.up && (src.source === `relay:${s.server}` || src.source === `events:${s.server}`),
  );
  return (
    !s.streamed &&
    !readsFail &&
    s.lastPullEventTs !== null &&
    input.now - s.lastPullEventTs >= t.sourceDownMs &&
    s.newBlockOutcomesSincePullEvent >= t.minServerRequests
  );
}

/** Per server, what reached the sidecar and what did not: the evidence that names who lost what. */
function pullByServer(input: DiagnosisInput, hit: readonly ServerDiagnosis[]): string {
  return hit
    .map((s) => {
      const lost = `${s.gaps} gaps, ${s.missedEvents} of ${s.missedEvents + s.events} events missed (${(ratio(s.missedEvents, s.missedEvents + s.events) * 100).toFixed(1)}%)`;
      if (!streamTaken(input, s)) return `${s.server}: ${lost}`;
      const silent = `no event for ${((input.now - s.lastPullEventTs!) / 1000).toFixed(0)} s while ${s.newBlockOutcomesSincePullEvent} requests stored new blocks`;
      return `${s.server}: ${s.gaps > 0 ? `${lost}, then ` : ''}${silent}`;
    })
    .join('; ');
}

/** the gaps over the gapped servers and what they missed (events on the pull path, batches on a stream) */
function gapTotals(hit: readonly ServerDiagnosis[]) {
  return {
    gaps: hit.reduce((n, s) => n + s.gaps, 0),
    missed: hit.reduce((n, s) => n + s.missedEvents, 0),
    names: hit.map((s) => s.server),
  };
}

function pullGaps(input: DiagnosisInput, hit: readonly ServerDiagnosis[]): RuleHit | null {
  if (hit.length === 0) return null;
  const { gaps, missed, names } = gapTotals(hit);
  const events = hit.reduce((n, s) => n + s.events, 0);
  const taken = hit.filter((s) => streamTaken(input, s));
  const gapped = hit.filter((s) => s.gaps > 0);
  const parts = [
    gapped.length > 0
      ? `${gaps} event_id gaps on ${gapped.map((s) => s.server).join(', ')}: ${missed} events (${(ratio(missed, missed + events) * 100).toFixed(1)}%) were drained by another consumer`
      : null,
    taken.length > 0
      ? `the drains of ${taken.map((s) => s.server).join(', ')} stopped bringing events while ${taken.reduce((n, s) => n + s.newBlockOutcomesSincePullEvent, 0)} requests stored new blocks: another consumer takes their whole queue`
      : null,
  ].filter((p) => p !== null);
  return {
    servers: names,
    summary: parts.join('; '),
    evidence: {
      gaps,
      missed_events: missed,
      drained_events: events,
      missed_share: round3(ratio(missed, missed + events)),
      gaps_by_rank: byRank(hit),
      by_server: pullByServer(input, hit),
      ...(taken.length > 0 ? { queue_taken_whole: taken.map((s) => s.server).join(' ') } : {}),
    },
    cause:
      'docs/trtllm-wire.md §7.2: another consumer drains the same worker queue (POST /kv_cache_events is destructive); or the worker buffer overflowed' +
      (taken.length > 0 ? ' (a queue taken whole: or the worker restarted with its event buffer off)' : ''),
    fix:
      `make the kvsentinel relay the only consumer of POST /kv_cache_events on ${names.join(', ')}: remove the other poller ` +
      '(second orchestrator replica, KvEventFanout/gRPC pump, Dynamo, a metrics poller) or set its context_servers.urls to the relay ports; ' +
      'if no other consumer exists, raise kv_cache_config.event_buffer_max_size on those workers',
  };
}

function streamGaps(input: DiagnosisInput, hit: readonly ServerDiagnosis[]): RuleHit | null {
  if (hit.length === 0) return null;
  const { gaps, missed: lost, names } = gapTotals(hit);
  const filled = hit.reduce((n, s) => n + s.streamBatchesFilled, 0);
  const repeated = hit.some((s) => s.gaps >= input.thresholds.minGaps);
  return {
    servers: names,
    summary:
      `stream gaps: ${gaps} seq gap${gaps === 1 ? '' : 's'} on the ZMQ KV-event streams of ${names.join(', ')} lost ${lost} batch${lost === 1 ? '' : 'es'} replay could not refill` +
      `${filled > 0 ? ` (${filled} more were recovered by replay)` : ''}: ` +
      "the blocks those batches stored and removed are missing from kvsentinel's worker tables and from every subscriber's, the router's included, until they are stored again or evicted",
    evidence: {
      stream_gaps: gaps,
      lost_batches: lost,
      replayed_batches: filled,
      stream_events: hit.reduce((n, s) => n + s.streamEvents, 0),
      gaps_by_rank: byRank(hit),
      stream_by_server: hit.map((s) => `${s.server}: ${s.gaps} gaps, ${s.missedEvents} batches lost`).join('; '),
    },
    cause:
      'KV-event batches were dropped between publisher and subscribers (a full publisher queue, a failed send, or a subscriber past its ZMQ high-water mark) and the replay endpoint no longer held them (or none is configured): every subscriber, the router included, misses that KV-cache state',
    fix:
      `give the publishers of ${names.join(', ')} a replay_endpoint and pass it to kvsentinel (--zmq ID=ENDPOINT,replay=ENDPOINT) so gaps are refilled, ` +
      "or, if they have one, a larger replay buffer (buffer_steps); raise the publisher's hwm and max_queue_size (kv_events_config / --kv-events-config), and make sure the router's subscriber resynchronizes on a gap" +
      (repeated ? '' : '; a single gap heals as the missing blocks are evicted or stored again'),
    ...(repeated ? {} : { severity: 'warning' as const }),
  };
}

export const eventQueueShared: Rule = {
  id: 'event-queue-shared',
  evaluate(input) {
    if (!input.seesWorkerEvents) return null;
    const t = input.thresholds;
    const servers = input.servers.map(withoutSidecarGaps);
    // a pull-path gap can be the sidecar's own (a drain aborted after the worker popped its events): three make a
    // pattern; a stream gap is never ours (replay filled what it could), so one lost batch shows
    const pull = servers.filter((s) => !s.streamed && (s.gaps >= t.minGaps || streamTaken(input, s)));
    const stream = servers.filter((s) => s.streamed && s.gaps > 0);
    const parts = [pullGaps(input, pull), streamGaps(input, stream)].filter((h): h is RuleHit => h !== null);
    if (parts.length === 0) return null;
    const evidence = { ...mergeEvidence(parts), ...windowEvidence(input.window) };
    // one finding: critical unless every part is below it
    const warning = parts.every((h) => h.severity === 'warning');
    return {
      servers: parts.flatMap((h) => h.servers),
      summary: parts.map((h) => h.summary).join('; '),
      evidence,
      cause: parts.map((h) => h.cause).join('; '),
      fix: parts.map((h) => h.fix).join('; '),
      ...(warning ? { severity: 'warning' as const } : {}),
    };
  },
};
