// Every metric family kvsentinel exports: one place for names, types, labels and help, shared by the exporter,
// the dashboards' lint test and the alert rules. Label values come only from configuration (server ids, ranks)
// and enums — never from request data.

export type MetricType = 'counter' | 'gauge' | 'histogram';

export interface MetricSpec {
  readonly name: string;
  readonly type: MetricType;
  readonly help: string;
  readonly labels: readonly string[];
}

function spec(name: string, type: MetricType, labels: readonly string[], help: string): MetricSpec {
  return { name: `kvsentinel_${name}`, type, help, labels };
}

export const METRICS = {
  buildInfo: spec('build_info', 'gauge', ['version', 'revision', 'nodejs_version'], 'Build information; always 1.'),
  up: spec('up', 'gauge', ['source'], '1 if the last read of the source succeeded, 0 otherwise.'),
  sourceErrors: spec('source_errors_total', 'counter', ['source', 'reason'], 'Failed reads of a source, by reason (connect, timeout, http_status, parse, oversized).'),
  badInput: spec('bad_input_total', 'counter', ['source', 'code'], 'Malformed input items skipped, by issue code.'),
  configReloadSuccessful: spec('config_last_reload_successful', 'gauge', [], '1 if the last configuration reload succeeded.'),
  configReloadTimestamp: spec('config_last_reload_success_timestamp_seconds', 'gauge', [], 'Time of the last successful configuration reload.'),

  kvEvents: spec('kv_events_total', 'counter', ['server', 'rank', 'type'], 'KV cache events drained from a CTX worker, by attention-DP rank and event type.'),
  kvEventGaps: spec('kv_event_gaps_total', 'counter', ['server', 'rank'], 'Jumps in event_id: events consumed by someone else or dropped by buffer overflow.'),
  kvEventsMissed: spec('kv_events_missed_total', 'counter', ['server', 'rank'], 'Events missing inside event_id gaps.'),
  kvEventResets: spec('kv_event_stream_resets_total', 'counter', ['server', 'rank'], 'event_id restarts (worker restarts); the reconstructed table was reset.'),
  relayEventsDropped: spec('relay_events_dropped_total', 'counter', ['server'], 'Events dropped from a consumer backlog that overflowed (drop-oldest).'),
  routerPolls: spec('router_polls_total', 'counter', ['server'], 'POST /kv_cache_events the router sent to the relay.'),
  relayEventsDelivered: spec('relay_events_delivered_total', 'counter', ['server'], 'Events the relay delivered to the router.'),
  hashChecks: spec('hash_checks_total', 'counter', ['server', 'result'], 'Stored block hashes recomputed from their tokens: match, mismatch or unverifiable.'),

  workerTableBlocks: spec('worker_table_blocks', 'gauge', ['server', 'rank', 'cache_level'], 'Blocks each worker holds, reconstructed from its events.'),
  routerTableBlocks: spec('router_table_blocks', 'gauge', ['server'], "Blocks in the router's replica of a server's table (events delivered to the router)."),

  requests: spec('requests_total', 'counter', ['server'], 'CTX requests the router sent to a server.'),
  requestFailures: spec('request_failures_total', 'counter', ['server'], 'CTX requests that failed.'),
  promptTokens: spec('prompt_tokens_total', 'counter', ['server'], 'Prompt tokens of completed CTX requests.'),
  cachedTokens: spec('cached_tokens_total', 'counter', ['server'], 'Prompt tokens the server reported as cached (usage.prompt_tokens_details.cached_tokens).'),
  oracleCachedTokens: spec('oracle_cached_tokens_total', 'counter', ['server'], 'Prompt tokens the ideal choice could have served from cache, by chosen server: the best server\'s cached prefix (worker truth) while KV events are seen, else the sticky ideal (each follow-up turn on its previous server).'),
  predictedRouterCachedTokens: spec('predicted_router_cached_tokens_total', 'counter', ['server'], "Prompt tokens the router's table predicted as cached on the chosen server."),
  decisions: spec('decisions_total', 'counter', ['outcome'], 'Routing decisions: oracle_best, not_oracle_best or no_prefix (no server held any prefix).'),
  followupTurns: spec('followup_turns_total', 'counter', [], 'Follow-up turns (turn >= 2) of trajectories seen before.'),
  scatteredTurns: spec('scattered_turns_total', 'counter', [], 'Follow-up turns whose cached tokens were under half the prompt although an earlier turn was served.'),
  inflightRequests: spec('inflight_requests', 'gauge', ['server'], 'CTX requests in flight through the relay.'),
  relayRejected: spec(
    'relay_requests_rejected_total',
    'counter',
    ['server', 'reason'],
    'Requests the relay refused without forwarding them, by reason (body_too_large: body over relay.max_request_bytes, answered 413).',
  ),
  relayDuration: spec('relay_request_duration_seconds', 'histogram', ['server'], 'Time the relay took to proxy a CTX request, to the last byte.'),

  findingActive: spec('finding_active', 'gauge', ['id', 'severity'], '1 while a diagnosis finding holds.'),
  verdict: spec('verdict', 'gauge', ['verdict'], '1 for the current verdict: healthy, degraded or inert.'),
} as const satisfies Record<string, MetricSpec>;

export type MetricKey = keyof typeof METRICS;
