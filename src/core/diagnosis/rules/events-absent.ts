// events-absent: a CTX server serves requests but no KV event reaches what should carry them. Three causes, by what
// the sidecar sees: every drain of /kv_cache_events comes back empty and no stream is subscribed (the pull path
// returns [] by construction: event buffer 0, block reuse off); the server's ZMQ stream carries events while the
// pull path stays empty (TensorRT-LLM's streaming publisher: the pull endpoint returns [] and the in-tree router,
// which only polls, is blind); or the subscribed stream itself stays silent (publisher off, wrong endpoint or topic).
import type { Rule, RuleHit, ServerDiagnosis } from '../rule.js';
import { mergeEvidence, nextPowerOfTwo, ratio, round3, windowEvidence, windowSeconds } from './rule-math.js';

const MIN_SUGGESTED_BUFFER = 16_384;

/** events that came out of /kv_cache_events (drains), as opposed to the stream */
function pullEvents(s: ServerDiagnosis): number {
  return s.events - s.streamEvents;
}

/** the sidecar read the pull path: it drained it, or the router polled it through the relay */
function pullObserved(s: ServerDiagnosis): boolean {
  return s.drains > 0 || s.routerPolls > 0;
}

export const eventsAbsent: Rule = {
  id: 'events-absent',
  evaluate(input) {
    if (!input.seesWorkerEvents || !input.router.consumesEvents) return null;
    const t = input.thresholds;
    const busy = input.servers.filter((s) => s.requests >= t.minServerRequests);
    // relays that report only non-empty drains still show the router's polls: either proves the sidecar was listening
    const pullSilent = busy.filter((s) => !s.streamed && s.events === 0);
    const blind = busy.filter((s) => s.streamEvents > 0 && pullEvents(s) === 0 && pullObserved(s));
    const streamSilent = busy.filter((s) => s.streamed && s.streamEvents === 0 && pullEvents(s) === 0);
    const hits = [pullAbsent(input, pullSilent), streamingBlind(blind), streamAbsent(streamSilent)].filter(
      (h): h is RuleHit => h !== null,
    );
    if (hits.length === 0) return null;
    if (hits.length === 1) return { ...hits[0]!, evidence: { ...hits[0]!.evidence, ...windowEvidence(input.window) } };
    return {
      servers: hits.flatMap((h) => h.servers),
      summary: hits.map((h) => h.summary).join('; '),
      evidence: { ...mergeEvidence(hits), ...windowEvidence(input.window) },
      cause: hits.map((h) => h.cause).join('; '),
      fix: hits.map((h) => h.fix).join('; '),
    };
  },
};

function pullAbsent(input: Parameters<Rule['evaluate']>[0], silent: readonly ServerDiagnosis[]): RuleHit | null {
  if (silent.length === 0) return null;
  const requests = silent.reduce((n, s) => n + s.requests, 0);
  const drains = silent.reduce((n, s) => n + s.drains, 0);
  const perServerRate = ratio(requests, silent.length) / windowSeconds(input.window);
  // room for ~30 s of events (a stored, a removed and an updated event per request), never below 16384: that floor
  // covers up to ~180 requests/s per server, so the advice does not move with the load of the moment (a demo and a
  // serve of the same cluster, a warm-up and a steady state suggest the same size); only busier servers get more
  const bufferSize = nextPowerOfTwo(Math.max(MIN_SUGGESTED_BUFFER, perServerRate * 3 * 30));
  const names = silent.map((s) => s.server);
  const routerPolls = silent.reduce((n, s) => n + s.routerPolls, 0);
  return {
    servers: names,
    summary: `${names.join(', ')} served ${requests} requests, yet no event ever came out of /kv_cache_events: ${pullReadText(drains, routerPolls)}`,
    evidence: {
      requests,
      // what the sentence says it read: the drains the sidecar counted (exclusive mode), or — a relay records only
      // drains that return events — the router's polls, every one answered []
      ...(drains > 0 || routerPolls === 0
        ? { drains, empty_drains: silent.reduce((n, s) => n + s.emptyDrains, 0) }
        : {}),
      router_polls: routerPolls,
      router_polls_all_empty: routerPolls > 0,
      events: 0,
      events_since_start: silent.reduce((n, s) => n + s.eventsTotal, 0),
      requests_per_second_per_server: round3(perServerRate),
    },
    cause:
      'docs/trtllm-wire.md §7.1: the pull path returns [] by construction (event_buffer_max_size 0, block reuse off, or kv_events_config push mode); ' +
      'from outside the same as another consumer that takes every event the moment it is queued (§7.2: a KvEventFanout/gRPC pump, Dynamo, an orchestrator polling in a loop)',
    fix:
      `kv_cache_config.event_buffer_max_size: ${bufferSize} and kv_cache_config.enable_block_reuse: true on CTX workers ${names.join(', ')}; ` +
      'remove kv_events_config (ZMQ push) from them, or the pull endpoint keeps returning []; ' +
      'if they are set already, another consumer drains the queue: make the kvsentinel relay its only consumer',
  };
}

/** What the sidecar's reads of the pull path saw, in words (the counters alone read as if it never drained). */
function pullReadText(drains: number, routerPolls: number): string {
  if (drains > 0) return `all ${drains} drains came back [] (${routerPolls} router polls)`;
  if (routerPolls > 0)
    return `the relay drained it on its interval and on each of the router's ${routerPolls} polls, and every drain came back [] (a relay records only drains that return events)`;
  return 'nothing read it: no drain and no router poll';
}

function streamingBlind(blind: readonly ServerDiagnosis[]): RuleHit | null {
  if (blind.length === 0) return null;
  const names = blind.map((s) => s.server);
  return {
    servers: names,
    summary: `${names.join(', ')} publish their KV events on a ZMQ stream (${blind.reduce((n, s) => n + s.streamEvents, 0)} events) while /kv_cache_events returns [] (${blind.reduce((n, s) => n + s.drains, 0)} drains, ${blind.reduce((n, s) => n + s.routerPolls, 0)} router polls)`,
    evidence: {
      requests: blind.reduce((n, s) => n + s.requests, 0),
      stream_events: blind.reduce((n, s) => n + s.streamEvents, 0),
      pull_events: 0,
      drains: blind.reduce((n, s) => n + s.drains, 0),
      router_polls: blind.reduce((n, s) => n + s.routerPolls, 0),
    },
    cause:
      'streaming publisher enabled: the pull endpoint returns [] and the in-tree router is blind (docs/trtllm-wire.md §7.1: kv_events_config makes the V2 manager publish over ZMQ only)',
    fix:
      `either remove kv_events_config from CTX workers ${names.join(', ')} (with kv_cache_config.event_buffer_max_size > 0 the pull endpoint carries the events again), ` +
      'or route with a router that subscribes to the ZMQ stream (Dynamo, llm-d precise prefix scorer) instead of the in-tree kv_cache_aware router',
  };
}

function streamAbsent(silent: readonly ServerDiagnosis[]): RuleHit | null {
  if (silent.length === 0) return null;
  const names = silent.map((s) => s.server);
  return {
    servers: names,
    summary: `${names.join(', ')} served ${silent.reduce((n, s) => n + s.requests, 0)} requests, yet their ZMQ KV-event stream carried no event`,
    evidence: { requests: silent.reduce((n, s) => n + s.requests, 0), stream_events: 0 },
    cause:
      'the KV-event publisher is off or publishes elsewhere: no kv_events_config / --kv-events-config on the worker, enable_kv_cache_events false, prefix caching off, another endpoint or topic, or a port offset (base port + rank) that does not match',
    fix:
      `check the worker flags of ${names.join(', ')} (vLLM: --kv-events-config '{"enable_kv_cache_events": true, "publisher": "zmq", "endpoint": "tcp://*:5557"}' with prefix caching on; ` +
      'SGLang: --kv-events-config \'{"publisher": "zmq", "endpoint": "tcp://*:5557"}\'; TensorRT-LLM: kv_events_config {publisher: zmq, endpoint: tcp://*:5557}) and that --zmq names that endpoint and topic',
  };
}
