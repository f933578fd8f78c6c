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
  sourceErrors: spec(
    'source_errors_total',
    'counter',
    ['source', 'reason'],
    'Failed reads of a source, by reason (connect, timeout, http_status, parse, oversized).',
  ),
  badInput: spec('bad_input_total', 'counter', ['source', 'code'], 'Malformed input items skipped, by issue code.'),
  configReloadSuccessful: spec(
    'config_last_reload_successful',
    'gauge',
    [],
    '1 if the last configuration reload succeeded.',
  ),
  configReloadTimestamp: spec(
    'config_last_reload_success_timestamp_seconds',
    'gauge',
    [],
    'Time of the last successful configuration reload.',
  ),

  kvEvents: spec(
    'kv_events_total',
    'counter',
    ['server', 'rank', 'type'],
    'KV cache events drained from a CTX worker, by attention-DP rank and event type.',
  ),
  kvEventGaps: spec(
    'kv_event_gaps_total',
    'counter',
    ['server', 'rank'],
    'Jumps in event_id: events consumed by someone else or dropped by buffer overflow.',
  ),
  kvEventsMissed: spec('kv_events_missed_total', 'counter', ['server', 'rank'], 'Events missing inside event_id gaps.'),
  kvEventResets: spec(
    'kv_event_stream_resets_total',
    'counter',
    ['server', 'rank'],
    'event_id restarts (worker restarts); the reconstructed table was reset.',
  ),
  streamBatches: spec(
    'stream_batches_total',
    'counter',
    ['server', 'rank'],
    'KV-event batches received in seq order from a ZMQ stream (live or replayed).',
  ),
  streamBatchesReplayed: spec(
    'stream_batches_replayed_total',
    'counter',
    ['server', 'rank'],
    'Stream batches missing from the live stream and recovered through the replay endpoint.',
  ),
  streamBatchesLost: spec(
    'stream_batches_lost_total',
    'counter',
    ['server', 'rank'],
    'Stream batches that never arrived (seq gaps replay did not fill: a full publisher queue, a subscriber past its high-water mark).',
  ),
  streamMalformed: spec(
    'stream_malformed_total',
    'counter',
    ['server', 'rank'],
    'Stream messages or batches that could not be read (wrong frames, not msgpack, not a batch); skipped.',
  ),
  streamBlocksUnresolved: spec(
    'stream_blocks_unresolved_total',
    'counter',
    ['server', 'rank'],
    'Stored blocks of a stream held in worker truth under their engine hash only, so no prompt can match them: their parent was stored before kvsentinel subscribed, or their token ids were absent or not integers.',
  ),
  streamUnmatchedRemovals: spec(
    'stream_unmatched_removals_total',
    'counter',
    ['server', 'rank'],
    'Removed block hashes of a stream that matched no resident copy at their medium (a store missed in a gap, or history before kvsentinel subscribed).',
  ),
  streamHistoryIncompleteSince: spec(
    'stream_history_incomplete_since_seconds',
    'gauge',
    ['server', 'rank'],
    'Since when (Unix seconds) a ZMQ rank lacks history: kvsentinel subscribed after more batches than the publisher buffers for replay; present until the table has turned over.',
  ),
  streamForwarded: spec(
    'stream_forwarded_total',
    'counter',
    ['endpoint', 'to'],
    "Messages a bound socket (--zmq-bind forward=) passed on unchanged to the consumer whose endpoint kvsentinel took (llm-d's scheduler).",
  ),
  streamForwardFailures: spec(
    'stream_forward_failures_total',
    'counter',
    ['endpoint', 'to'],
    'Messages a bound socket could not pass on to its forward= consumer (a send that failed).',
  ),
  streamForwardConnected: spec(
    'stream_forward_connected',
    'gauge',
    ['endpoint', 'to'],
    '1 while the forward= consumer of a bound socket is connected; 0 while messages to it are dropped.',
  ),
  relayEventsDropped: spec(
    'relay_events_dropped_total',
    'counter',
    ['server'],
    'Events dropped from a consumer backlog that overflowed (drop-oldest).',
  ),
  routerPolls: spec('router_polls_total', 'counter', ['server'], 'POST /kv_cache_events the router sent to the relay.'),
  relayAbandonedPolls: spec(
    'relay_abandoned_polls_total',
    'counter',
    ['server'],
    "Event polls whose consumer hung up before the answer (a router poll timeout while the worker was slow); the events wait for that consumer's next poll.",
  ),
  relayEventsRedelivered: spec(
    'relay_events_redelivered_total',
    'counter',
    ['server'],
    'Events the relay gave a consumer (a relay listen port, or a named consumer) that had already received them: 0 by design (each consumer has one cursor); anything else is a bug to report.',
  ),
  relayEventsDelivered: spec(
    'relay_events_delivered_total',
    'counter',
    ['server'],
    'Events the relay delivered to the router.',
  ),
  hashChecks: spec(
    'hash_checks_total',
    'counter',
    ['server', 'result'],
    'Stored block hashes recomputed from their tokens: match, mismatch or unverifiable.',
  ),

  workerTableBlocks: spec(
    'worker_table_blocks',
    'gauge',
    ['server', 'rank', 'cache_level'],
    'Blocks each worker holds, reconstructed from its events.',
  ),
  tableBlocksEvicted: spec(
    'table_blocks_evicted_total',
    'counter',
    ['server', 'table'],
    "Blocks evicted from kvsentinel's block tables (table: worker truth or router replica) because a server reached state.max_table_blocks; usually removed events were lost.",
  ),
  routerTableBlocks: spec(
    'router_table_blocks',
    'gauge',
    ['server'],
    "Blocks in the router's replica of a server's table (events delivered to the router).",
  ),

  requests: spec('requests_total', 'counter', ['server'], 'CTX requests the router sent to a server.'),
  requestFailures: spec('request_failures_total', 'counter', ['server'], 'CTX requests that failed.'),
  promptTokens: spec('prompt_tokens_total', 'counter', ['server'], 'Prompt tokens of completed CTX requests.'),
  cachedTokens: spec(
    'cached_tokens_total',
    'counter',
    ['server'],
    'Prompt tokens the server reported as cached (usage.prompt_tokens_details.cached_tokens).',
  ),
  oracleCachedTokens: spec(
    'oracle_cached_tokens_total',
    'counter',
    ['server'],
    "Prompt tokens the ideal choice could have served from cache, by chosen server: the best server's cached prefix (worker truth) while KV events are seen, else the sticky ideal (each follow-up turn on its previous server).",
  ),
  predictedRouterCachedTokens: spec(
    'predicted_router_cached_tokens_total',
    'counter',
    ['server'],
    "Prompt tokens the router's table predicted as cached on the chosen server.",
  ),
  decisions: spec(
    'decisions_total',
    'counter',
    ['outcome'],
    'Routing decisions: oracle_best, not_oracle_best or no_prefix (no server held any prefix).',
  ),
  followupTurns: spec(
    'followup_turns_total',
    'counter',
    [],
    'Follow-up turns (turn >= 2) of trajectories seen before.',
  ),
  scatteredTurns: spec(
    'scattered_turns_total',
    'counter',
    [],
    'Follow-up turns whose cached tokens were under half the prompt although an earlier turn was served.',
  ),
  inflightRequests: spec('inflight_requests', 'gauge', ['server'], 'CTX requests in flight through the relay.'),
  relayRejected: spec(
    'relay_requests_rejected_total',
    'counter',
    ['server', 'reason'],
    'Requests the relay refused without forwarding them, by reason (body_too_large: body over relay.max_request_bytes, answered 413).',
  ),
  relayUnreadable: spec(
    'relay_requests_unreadable_total',
    'counter',
    ['server', 'reason'],
    'CTX requests the relay forwarded but whose prompt or ids it could not read, by reason (unknown_encoding, malformed, too_large: over relay.capture_max_bytes, no_prompt); such decisions have no oracle and no predicted match.',
  ),
  renderRequests: spec(
    'render_requests_total',
    'counter',
    ['server', 'result'],
    "Text and chat CTX requests kvsentinel rendered with the model's tokenizer (--tokenizer) to get the ids the router hashes, by result (rendered, or why not: undecodable, no_chat_template, template_error, tokenizer_error, busy: too many renders waiting).",
  ),
  relayUpstreamRetries: spec(
    'relay_upstream_retries_total',
    'counter',
    ['server'],
    'CTX or other requests the relay sent again on a fresh connection because their connection to the worker was lost before any response byte (a worker closing an idle keep-alive socket as it was reused); the client never saw the failure.',
  ),
  relayScanFallbacks: spec(
    'relay_scan_fallbacks_total',
    'counter',
    ['server', 'reason'],
    'CTX requests and responses the relay read on a slow path (same answers, more CPU), by reason: inline (on the relay event loop: no scan thread), thread_stopped (read again after the scan thread stopped), text_path (not a flat token-id prompt: parsed whole as text), body_copy (did not fit the scan ring), ids_transferred (prompt ids did not fit the id ring), no_kernel (no WebAssembly: ids read byte by byte), kernel_copy (no shared WebAssembly memory).',
  ),
  relayDuration: spec(
    'relay_request_duration_seconds',
    'histogram',
    ['server'],
    'Time the relay took to proxy a CTX request, to the last byte.',
  ),

  cacheDropped: spec(
    'cache_dropped_total',
    'counter',
    ['cache', 'reason'],
    "Entries kvsentinel's bounded caches dropped, by cache and reason (cap: the bound was reached, budget: a budget shared by all relays was full, ttl: too old, idle: silent too long, slow_client: a ws client's queue was full).",
  ),

  findingActive: spec('finding_active', 'gauge', ['id', 'severity'], '1 while a diagnosis finding holds.'),
  findingServerActive: spec(
    'finding_server_active',
    'gauge',
    ['id', 'severity', 'server'],
    '1 while a diagnosis finding holds for this CTX server (server="" for a finding about no single server); the finding alerts carry its server label.',
  ),
  verdict: spec('verdict', 'gauge', ['verdict'], '1 for the current verdict: healthy, degraded or inert.'),
} as const satisfies Record<string, MetricSpec>;

/**
 * Every (cache, reason) of kvsentinel_cache_dropped_total, all exported from the start (0 until something drops).
 * The bounds behind them are listed in RELIABILITY.md ("Soak and bounds").
 */
export const CACHE_DROPS = [
  ['trajectories', 'cap'],
  ['trajectories', 'idle'],
  ['pending_decisions', 'cap'],
  ['pending_decisions', 'ttl'],
  ['replica_events', 'cap'],
  ['sources', 'cap'],
  ['score_joins', 'cap'],
  ['incremental_keys', 'cap'],
  ['v2_keys', 'cap'],
  ['servers', 'cap'],
  ['relay_events', 'cap'],
  ['relay_consumers', 'idle'],
  ['relay_consumers', 'cap'],
  ['relay_resume_positions', 'cap'],
  ['relay_read_history', 'budget'],
  ['relay_captures', 'cap'],
  ['ws_frames', 'slow_client'],
  ['ws_clients', 'cap'],
] as const;

type DropKey<T> = T extends readonly [infer C extends string, infer R extends string] ? `${C}:${R}` : never;
export type CacheDropKey = DropKey<(typeof CACHE_DROPS)[number]>;
