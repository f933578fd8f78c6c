// Every `--set` key of the simulator: its type, the config field it sets, when a value is a fault, and its help.
import { ROUTER_PROFILES, ROUTER_TYPE_NAMES } from '../core/observe/observation.js';
import { HASH_ALGOS } from '../core/wire/kv-event.js';
import { ORCHESTRATOR_LOG_FORMATS } from './log-lines.js';
import { PUBLISHER_FORMATS, VLLM_SIM_HASHES } from './publisher-format.js';
import { REQUEST_FORMATS } from './workload.js';

export type Kind =
  | 'int'
  | 'posint'
  | 'number'
  | 'bool'
  | 'duration'
  | 'optional-duration'
  | 'optional-path'
  | { readonly oneOf: readonly string[] };

interface Knob {
  readonly kind: Kind;
  readonly section: 'workload' | 'ctx' | 'router' | 'gen';
  readonly field: string;
  readonly fault?: (value: unknown) => boolean;
  readonly help: string;
}

/** every `--set` key; faults say when a value is a fault worth reporting */
export const KNOBS: Readonly<Record<string, Knob>> = {
  'workload.seed': { kind: 'int', section: 'workload', field: 'seed', help: 'random seed' },
  'workload.concurrency': {
    kind: 'posint',
    section: 'workload',
    field: 'concurrency',
    help: 'trajectories in flight (c)',
  },
  'workload.trajectories': {
    kind: 'posint',
    section: 'workload',
    field: 'trajectories',
    help: 'trajectories in the run',
  },
  'workload.system_prefix_tokens': {
    kind: 'int',
    section: 'workload',
    field: 'systemPrefixTokens',
    help: 'shared system prefix',
  },
  'workload.task_tokens_median': {
    kind: 'posint',
    section: 'workload',
    field: 'taskTokensMedian',
    help: 'first user message, median',
  },
  'workload.task_tokens_sigma': {
    kind: 'number',
    section: 'workload',
    field: 'taskTokensSigma',
    help: 'log-normal sigma',
  },
  'workload.turns_min': { kind: 'posint', section: 'workload', field: 'turnsMin', help: 'turns per trajectory, min' },
  'workload.turns_max': { kind: 'posint', section: 'workload', field: 'turnsMax', help: 'turns per trajectory, max' },
  'workload.output_tokens_median': {
    kind: 'posint',
    section: 'workload',
    field: 'outputTokensMedian',
    help: 'output per turn, median',
  },
  'workload.output_tokens_sigma': {
    kind: 'number',
    section: 'workload',
    field: 'outputTokensSigma',
    help: 'log-normal sigma',
  },
  'workload.tool_tokens_median': {
    kind: 'posint',
    section: 'workload',
    field: 'toolTokensMedian',
    help: 'tool result per turn, median',
  },
  'workload.tool_tokens_sigma': {
    kind: 'number',
    section: 'workload',
    field: 'toolTokensSigma',
    help: 'log-normal sigma',
  },
  'workload.tool_tokens_max': { kind: 'posint', section: 'workload', field: 'toolTokensMax', help: 'tool result cap' },
  'workload.tool_big_probability': {
    kind: 'number',
    section: 'workload',
    field: 'toolBigProbability',
    help: 'share of large tool results',
  },
  'workload.tool_big_median': {
    kind: 'posint',
    section: 'workload',
    field: 'toolBigMedian',
    help: 'large tool result, median',
  },
  'workload.tool_big_sigma': { kind: 'number', section: 'workload', field: 'toolBigSigma', help: 'log-normal sigma' },
  'workload.tool_latency': {
    kind: 'duration',
    section: 'workload',
    field: 'toolLatencyMs',
    help: 'mean tool execution time',
  },
  'workload.ramp': { kind: 'duration', section: 'workload', field: 'rampMs', help: 'start window of the c slots' },
  'workload.request_format': {
    kind: { oneOf: REQUEST_FORMATS },
    section: 'workload',
    field: 'requestFormat',
    help: 'live prompts as token ids, text, one chat message or multi-turn chat messages (chat-turns)',
  },
  'ctx.servers': { kind: 'posint', section: 'ctx', field: 'servers', help: 'CTX servers' },
  'ctx.attention_dp': { kind: 'posint', section: 'ctx', field: 'attentionDp', help: 'attention-DP ranks per server' },
  'ctx.tokens_per_block': { kind: 'posint', section: 'ctx', field: 'tokensPerBlock', help: 'worker KV block size' },
  'ctx.gpu_blocks': { kind: 'posint', section: 'ctx', field: 'gpuBlocksPerRank', help: 'GPU blocks per rank' },
  'ctx.host_blocks': {
    kind: 'int',
    section: 'ctx',
    field: 'hostBlocksPerRank',
    help: 'host blocks per rank (host_cache_size)',
  },
  'ctx.max_concurrency': {
    kind: 'posint',
    section: 'ctx',
    field: 'maxConcurrency',
    help: 'prefills running at once per server',
  },
  'ctx.prefill_tokens_per_s': {
    kind: 'number',
    section: 'ctx',
    field: 'prefillTokensPerSecond',
    help: 'prefill throughput per running request',
  },
  'ctx.overhead': { kind: 'duration', section: 'ctx', field: 'overheadMs', help: 'fixed prefill overhead' },
  'ctx.rank_assignment': {
    kind: { oneOf: ['affinity', 'least_loaded'] },
    section: 'ctx',
    field: 'rankAssignment',
    help: 'attention-DP rank choice',
  },
  'ctx.hash_algo': {
    kind: { oneOf: HASH_ALGOS },
    section: 'ctx',
    field: 'hashAlgo',
    help: 'kv_cache_event_hash_algo (effective)',
  },
  'ctx.event_buffer_max_size': {
    kind: 'int',
    section: 'ctx',
    field: 'eventBufferMaxSize',
    fault: (v) => v === 0,
    help: 'KV event buffer per rank; 0 = events off',
  },
  'ctx.kv_events_push': {
    kind: 'bool',
    section: 'ctx',
    field: 'kvEventsPush',
    fault: (v) => v === true,
    help: 'push (ZMQ) events: pull returns []',
  },
  'ctx.kv_events_publisher': {
    kind: { oneOf: ['none', ...PUBLISHER_FORMATS] },
    section: 'ctx',
    field: 'kvEventsPublisher',
    fault: (v) => v === 'trtllm',
    help: 'live: publish events over ZMQ (trtllm|vllm|vllm-array|sglang; pull returns []; trtllm forces v2_sha256_64; vllm/sglang: the router reads the stream)',
  },
  'ctx.kv_events_replay': {
    kind: 'bool',
    section: 'ctx',
    field: 'kvEventsReplay',
    help: 'live: the ZMQ publisher serves replay',
  },
  'ctx.vllm_hashes': {
    kind: { oneOf: VLLM_SIM_HASHES },
    section: 'ctx',
    field: 'vllmHashes',
    help: "live, publisher vllm: block hashes published (sim: the simulator's; sha256_cbor[_int]: vLLM's under PYTHONHASHSEED=0, bytes or ints)",
  },
  'ctx.competing_consumer': {
    kind: 'bool',
    section: 'ctx',
    field: 'competingConsumer',
    fault: (v) => v === true,
    help: 'another consumer drains /kv_cache_events',
  },
  'ctx.competitor_period': {
    kind: 'duration',
    section: 'ctx',
    field: 'competitorPeriodMs',
    help: 'how often the competitor drains',
  },
  'ctx.competitor_pump_from': {
    kind: 'optional-duration',
    section: 'ctx',
    field: 'competitorPumpFromMs',
    fault: (v) => v !== null,
    help: 'from this virtual time on a pump (KvEventFanout-style) takes every event as it is queued',
  },
  'ctx.adp_gather_drop': {
    kind: 'bool',
    section: 'ctx',
    field: 'adpGatherDrop',
    fault: (v) => v === true,
    help: 'events of ranks ≠ 0 lost',
  },
  'ctx.gather_period': {
    kind: 'duration',
    section: 'ctx',
    field: 'gatherPeriodMs',
    help: 'attention_dp_events_gather_period_ms',
  },
  'ctx.window_size': { kind: 'posint', section: 'ctx', field: 'windowSize', help: 'window_size in events' },
  'ctx.restart_at': {
    kind: 'optional-duration',
    section: 'ctx',
    field: 'restartAtMs',
    fault: (v) => v !== null,
    help: 'ctx0 restarts at this virtual time',
  },
  'ctx.restart_downtime': { kind: 'duration', section: 'ctx', field: 'restartDowntimeMs', help: 'restart downtime' },
  'ctx.stall_every': {
    kind: 'duration',
    section: 'ctx',
    field: 'stallEveryMs',
    help: 'mean time between CTX stalls (0 = none)',
  },
  'ctx.stall': { kind: 'duration', section: 'ctx', field: 'stallMs', help: 'mean CTX stall duration' },
  'ctx.keep_alive_timeout': {
    kind: 'duration',
    section: 'ctx',
    field: 'keepAliveTimeoutMs',
    help: 'live workers close idle connections after this (real time)',
  },
  'ctx.tokenizer': {
    kind: 'optional-path',
    section: 'ctx',
    field: 'tokenizer',
    help: 'live: workers tokenize text/chat with this model folder (none = code points); the workload then sends chat',
  },
  'router.type': { kind: { oneOf: ROUTER_TYPE_NAMES }, section: 'router', field: 'type', help: 'CTX router' },
  'router.profile': {
    kind: { oneOf: ROUTER_PROFILES },
    section: 'router',
    field: 'profile',
    help: 'router.py version: 2026-06 | newest',
  },
  'router.tokens_per_block': {
    kind: 'int',
    section: 'router',
    field: 'tokensPerBlock',
    help: "router chunk size; 0 = unset (2026-06: 32, newest: adopts the worker's)",
  },
  'router.track_routed_blocks': {
    kind: 'bool',
    section: 'router',
    field: 'trackRoutedBlocks',
    help: 'newest: add routed hashes on finish',
  },
  'router.event_match_diag': {
    kind: 'bool',
    section: 'router',
    field: 'eventMatchDiag',
    help: 'newest: the intermediate router.py build that logs EVENT_MATCH_DIAG',
  },
  'router.log_format': {
    kind: { oneOf: ORCHESTRATOR_LOG_FORMATS },
    section: 'router',
    field: 'logFormat',
    help: 'orchestrator log: trtllm (the newest logger: module tag, %-style values after the format) | formatted',
  },
  'router.load_weight': { kind: 'number', section: 'router', field: 'loadWeight', help: 'newest: load term weight' },
  'router.load_cap': {
    kind: 'number',
    section: 'router',
    field: 'loadCap',
    help: 'newest: active/max_batch_size cap; 0 = none',
  },
  'router.max_batch_size': { kind: 'posint', section: 'router', field: 'maxBatchSize', help: 'load term denominator' },
  'router.backfill_block_hashes_on_finish': {
    kind: 'bool',
    section: 'router',
    field: 'backfillBlockHashesOnFinish',
    help: 'insert own hashes on finish',
  },
  'router.poll_on_finish': {
    kind: 'bool',
    section: 'router',
    field: 'pollOnFinish',
    fault: (v) => v === false,
    help: 'poll events in finish_request',
  },
  'router.token_drift': {
    kind: 'bool',
    section: 'router',
    field: 'tokenDrift',
    fault: (v) => v === true,
    help: 'router tokenizes differently',
  },
  'router.ctx_body': {
    kind: { oneOf: ['json', 'msgpack'] },
    section: 'router',
    field: 'ctxBody',
    help: 'live CTX request bodies: json (+X-Correlation-ID) or msgpack (newest)',
  },
  'router.return_prompt_token_ids_b64': {
    kind: 'bool',
    section: 'router',
    field: 'returnPromptTokenIdsB64',
    help: 'ask workers for prompt_token_ids_b64',
  },
  'router.write_token_ids': {
    kind: 'bool',
    section: 'router',
    field: 'writeTokenIds',
    help: 'router writes its ids into text/chat CTX requests',
  },
  'router.poll_new_connection': {
    kind: 'bool',
    section: 'router',
    field: 'pollNewConnection',
    help: 'each event poll on a new connection',
  },
  'router.tokenizer': {
    kind: 'optional-path',
    section: 'router',
    field: 'tokenizer',
    help: "live: the router tokenizes text/chat itself with this model folder (none = the workers' ids)",
  },
  'gen.overhead': { kind: 'duration', section: 'gen', field: 'overheadMs', help: 'GEN step overhead' },
  'gen.ms_per_token': { kind: 'number', section: 'gen', field: 'msPerToken', help: 'decode time per output token' },
};
