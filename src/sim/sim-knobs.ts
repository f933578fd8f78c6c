// The simulator's settings, written once: per section, every field with its `--set` key, its kind (which gives
// both its TypeScript type and how --set reads it), whether a value is a fault, and its help. SimConfig's sections
// (sim-config.ts), the flat key table of --set and `kvsentinel sim keys` are derived from these tables.
import { ROUTER_PROFILES, ROUTER_TYPE_NAMES } from '../core/observe/observation.js';
import { HASH_ALGOS } from '../core/wire/kv-event.js';
import { RANK_ASSIGNMENTS } from './ctx-worker.js';
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

interface KnobSpec {
  /** the `--set` key: section.snake_name */
  readonly key: string;
  readonly kind: Kind;
  /** a value that injects a fault worth reporting */
  readonly fault?: (value: unknown) => boolean;
  readonly help: string;
  /** presets may leave it out: the code that reads it states the default */
  readonly optional?: true;
}

type KnobTable = Readonly<Record<string, KnobSpec>>;

/** the TypeScript type of a kind's values */
type ValueOf<K extends Kind> = K extends 'bool'
  ? boolean
  : K extends 'optional-duration'
    ? number | null
    : K extends 'optional-path'
      ? string | null
      : K extends { readonly oneOf: readonly (infer T)[] }
        ? T
        : number;

type OptionalFields<T extends KnobTable> = {
  [F in keyof T]: T[F] extends { readonly optional: true } ? F : never;
}[keyof T];

/** A config section's shape, from its knob table: every field of its kind's type; optional ones may be absent. */
export type SectionOf<T extends KnobTable> = {
  readonly [F in Exclude<keyof T, OptionalFields<T>>]: ValueOf<T[F]['kind']>;
} & { readonly [F in OptionalFields<T>]?: ValueOf<T[F]['kind']> };

/** The workload (workload.ts): the closed-loop agentic trajectories. */
export const WORKLOAD_KNOBS = {
  seed: { key: 'workload.seed', kind: 'int', help: 'random seed' },
  /** trajectories in flight at once (closed loop) */
  concurrency: { key: 'workload.concurrency', kind: 'posint', help: 'trajectories in flight (c)' },
  /** trajectories in the run */
  trajectories: { key: 'workload.trajectories', kind: 'posint', help: 'trajectories in the run' },
  systemPrefixTokens: { key: 'workload.system_prefix_tokens', kind: 'int', help: 'shared system prefix' },
  /** first user message (task + repository context): log-normal */
  taskTokensMedian: { key: 'workload.task_tokens_median', kind: 'posint', help: 'first user message, median' },
  taskTokensSigma: { key: 'workload.task_tokens_sigma', kind: 'number', help: 'log-normal sigma' },
  /** turns per trajectory: uniform in [turnsMin, turnsMax] */
  turnsMin: { key: 'workload.turns_min', kind: 'posint', help: 'turns per trajectory, min' },
  turnsMax: { key: 'workload.turns_max', kind: 'posint', help: 'turns per trajectory, max' },
  /** model output per turn (tool calls, edits): log-normal */
  outputTokensMedian: { key: 'workload.output_tokens_median', kind: 'posint', help: 'output per turn, median' },
  outputTokensSigma: { key: 'workload.output_tokens_sigma', kind: 'number', help: 'log-normal sigma' },
  /** tool result appended after each turn: log-normal, capped */
  toolTokensMedian: { key: 'workload.tool_tokens_median', kind: 'posint', help: 'tool result per turn, median' },
  toolTokensSigma: { key: 'workload.tool_tokens_sigma', kind: 'number', help: 'log-normal sigma' },
  toolTokensMax: { key: 'workload.tool_tokens_max', kind: 'posint', help: 'tool result cap' },
  /** share of tool results that are large dumps (whole files, test logs): a second log-normal */
  toolBigProbability: { key: 'workload.tool_big_probability', kind: 'number', help: 'share of large tool results' },
  toolBigMedian: { key: 'workload.tool_big_median', kind: 'posint', help: 'large tool result, median' },
  toolBigSigma: { key: 'workload.tool_big_sigma', kind: 'number', help: 'log-normal sigma' },
  /** client-side tool execution time between turns (exponential mean) */
  toolLatencyMs: { key: 'workload.tool_latency', kind: 'duration', help: 'mean tool execution time' },
  /** trajectory slots start uniformly within this window */
  rampMs: { key: 'workload.ramp', kind: 'duration', help: 'start window of the c slots' },
  /**
   * how the live workload sends prompts: token ids in `prompt`, text in `prompt` (/v1/completions), or chat
   * `messages` (/v1/chat/completions); text is the ids as code points, which every simulated server tokenizes back.
   * `chat` sends the whole context as one user message; `chat-turns` as a multi-turn client does: the system prefix,
   * the first task, then the rest, so the first two messages (the newest router's pin key) stay fixed per conversation
   */
  requestFormat: {
    key: 'workload.request_format',
    kind: { oneOf: REQUEST_FORMATS },
    help: 'live prompts as token ids, text, one chat message or multi-turn chat messages (chat-turns)',
  },
} as const satisfies KnobTable;

/** The CTX servers (ctx-worker.ts, event-queue.ts; live: live-ctx-worker.ts). */
export const CTX_KNOBS = {
  servers: { key: 'ctx.servers', kind: 'posint', help: 'CTX servers' },
  attentionDp: { key: 'ctx.attention_dp', kind: 'posint', help: 'attention-DP ranks per server' },
  tokensPerBlock: { key: 'ctx.tokens_per_block', kind: 'posint', help: 'worker KV block size' },
  gpuBlocksPerRank: { key: 'ctx.gpu_blocks', kind: 'posint', help: 'GPU blocks per rank' },
  hostBlocksPerRank: { key: 'ctx.host_blocks', kind: 'int', help: 'host blocks per rank (host_cache_size)' },
  maxConcurrency: { key: 'ctx.max_concurrency', kind: 'posint', help: 'prefills running at once per server' },
  prefillTokensPerSecond: {
    key: 'ctx.prefill_tokens_per_s',
    kind: 'number',
    help: 'prefill throughput per running request',
  },
  overheadMs: { key: 'ctx.overhead', kind: 'duration', help: 'fixed prefill overhead' },
  rankAssignment: {
    key: 'ctx.rank_assignment',
    kind: { oneOf: RANK_ASSIGNMENTS },
    help: 'attention-DP rank choice',
  },
  hashAlgo: { key: 'ctx.hash_algo', kind: { oneOf: HASH_ALGOS }, help: 'kv_cache_event_hash_algo (effective)' },
  eventBufferMaxSize: {
    key: 'ctx.event_buffer_max_size',
    kind: 'int',
    fault: (v) => v === 0,
    help: 'KV event buffer per rank; 0 = events off',
  },
  kvEventsPush: {
    key: 'ctx.kv_events_push',
    kind: 'bool',
    fault: (v) => v === true,
    help: 'push (ZMQ) events: pull returns []',
  },
  /** live driver: publish KV events over ZMQ in this engine's format (implies the push path: pull returns []) */
  kvEventsPublisher: {
    key: 'ctx.kv_events_publisher',
    kind: { oneOf: ['none', ...PUBLISHER_FORMATS] },
    fault: (v) => v === 'trtllm',
    help: 'live: publish events over ZMQ (trtllm|vllm|vllm-array|sglang; pull returns []; trtllm forces v2_sha256_64; vllm/sglang: the router reads the stream)',
  },
  /** with a publisher: a replay ROUTER per rank */
  kvEventsReplay: { key: 'ctx.kv_events_replay', kind: 'bool', help: 'live: the ZMQ publisher serves replay' },
  /**
   * publisher vllm: the block hashes it publishes — the simulator's own ('sim'), or vLLM's sha256_cbor under
   * PYTHONHASHSEED=0 as bytes or as VLLM_KV_EVENTS_USE_INT_BLOCK_HASHES ints (kvsentinel then verifies them)
   */
  vllmHashes: {
    key: 'ctx.vllm_hashes',
    kind: { oneOf: VLLM_SIM_HASHES },
    help: "live, publisher vllm: block hashes published (sim: the simulator's; sha256_cbor[_int]: vLLM's under PYTHONHASHSEED=0, bytes or ints)",
  },
  competingConsumer: {
    key: 'ctx.competing_consumer',
    kind: 'bool',
    fault: (v) => v === true,
    help: 'another consumer drains /kv_cache_events',
  },
  competitorPeriodMs: { key: 'ctx.competitor_period', kind: 'duration', help: 'how often the competitor drains' },
  /** from this virtual time on a pump (KvEventFanout-style) takes every event as it is queued; null = never */
  competitorPumpFromMs: {
    key: 'ctx.competitor_pump_from',
    kind: 'optional-duration',
    fault: (v) => v !== null,
    help: 'from this virtual time on a pump (KvEventFanout-style) takes every event as it is queued',
  },
  adpGatherDrop: {
    key: 'ctx.adp_gather_drop',
    kind: 'bool',
    fault: (v) => v === true,
    help: 'events of ranks ≠ 0 lost',
  },
  gatherPeriodMs: { key: 'ctx.gather_period', kind: 'duration', help: 'attention_dp_events_gather_period_ms' },
  windowSize: { key: 'ctx.window_size', kind: 'posint', help: 'window_size in events' },
  /** ctx0 restarts at this virtual time (ms); null = never */
  restartAtMs: {
    key: 'ctx.restart_at',
    kind: 'optional-duration',
    fault: (v) => v !== null,
    help: 'ctx0 restarts at this virtual time',
  },
  restartDowntimeMs: { key: 'ctx.restart_downtime', kind: 'duration', help: 'restart downtime' },
  /** mean time between stalls of one CTX server (0 = never) */
  stallEveryMs: { key: 'ctx.stall_every', kind: 'duration', help: 'mean time between CTX stalls (0 = none)' },
  /** mean stall duration (exponential) */
  stallMs: { key: 'ctx.stall', kind: 'duration', help: 'mean CTX stall duration' },
  /** live workers close idle keep-alive connections after this (real ms; trtllm-serve TIMEOUT_KEEP_ALIVE = 5 s) */
  keepAliveTimeoutMs: {
    key: 'ctx.keep_alive_timeout',
    kind: 'duration',
    help: 'live workers close idle connections after this (real time)',
  },
  /** live only: the workers tokenize text and chat requests with this tokenizer (a model folder); null = code points */
  tokenizer: {
    key: 'ctx.tokenizer',
    kind: 'optional-path',
    help: 'live: workers tokenize text/chat with this model folder (none = code points); the workload then sends chat',
    optional: true,
  },
} as const satisfies KnobTable;

/** The orchestrator's router (routers/) and its CTX requests. */
export const ROUTER_KNOBS = {
  type: { key: 'router.type', kind: { oneOf: ROUTER_TYPE_NAMES }, help: 'CTX router' },
  /** '2026-06' (default) or 'newest': score, tokens_per_block adoption, routed-block tracking, log lines */
  profile: {
    key: 'router.profile',
    kind: { oneOf: ROUTER_PROFILES },
    help: 'router.py version: 2026-06 | newest',
    optional: true,
  },
  /** 0 = unset: the 2026-06 router uses 32, the newest adopts the worker's block size */
  tokensPerBlock: {
    key: 'router.tokens_per_block',
    kind: 'int',
    help: "router chunk size; 0 = unset (2026-06: 32, newest: adopts the worker's)",
  },
  /** newest: add the routed hashes on a successful finish (default true) */
  trackRoutedBlocks: {
    key: 'router.track_routed_blocks',
    kind: 'bool',
    help: 'newest: add routed hashes on finish',
    optional: true,
  },
  /** newest: the intermediate router.py build that logs EVENT_MATCH_DIAG (default false: the newest does not) */
  eventMatchDiag: {
    key: 'router.event_match_diag',
    kind: 'bool',
    help: 'newest: the intermediate router.py build that logs EVENT_MATCH_DIAG',
    optional: true,
  },
  /** how the orchestrator's logger prints (default 'trtllm': the newest logger's form; log-lines.ts) */
  logFormat: {
    key: 'router.log_format',
    kind: { oneOf: ORCHESTRATOR_LOG_FORMATS },
    help: 'orchestrator log: trtllm (the newest logger: module tag, %-style values after the format) | formatted',
    optional: true,
  },
  /** newest: score = matches/tokens_per_block − load_weight·active (default 0.25) */
  loadWeight: { key: 'router.load_weight', kind: 'number', help: 'newest: load term weight', optional: true },
  /** newest: servers with active/max_batch_size ≥ load_cap are left out; 0 = no cap (default) */
  loadCap: {
    key: 'router.load_cap',
    kind: 'number',
    help: 'newest: active/max_batch_size cap; 0 = none',
    optional: true,
  },
  maxBatchSize: { key: 'router.max_batch_size', kind: 'posint', help: 'load term denominator' },
  backfillBlockHashesOnFinish: {
    key: 'router.backfill_block_hashes_on_finish',
    kind: 'bool',
    help: 'insert own hashes on finish',
  },
  pollOnFinish: {
    key: 'router.poll_on_finish',
    kind: 'bool',
    fault: (v) => v === false,
    help: 'poll events in finish_request',
  },
  tokenDrift: {
    key: 'router.token_drift',
    kind: 'bool',
    fault: (v) => v === true,
    help: 'router tokenizes differently',
  },
  /**
   * the orchestrator's CTX request bodies (live): JSON with X-Correlation-ID forwarded (older clients), or msgpack
   * flagged X-TRTLLM-Msgpack: 1 without it (newest, TRTLLM_SERVE_ENABLE_MSGSPEC=1)
   */
  ctxBody: {
    key: 'router.ctx_body',
    kind: { oneOf: ['json', 'msgpack'] },
    help: 'live CTX request bodies: json (+X-Correlation-ID) or msgpack (newest)',
  },
  /** ask context workers for prompt_token_ids_b64 (disaggregated_params.return_prompt_token_ids_b64) */
  returnPromptTokenIdsB64: {
    key: 'router.return_prompt_token_ids_b64',
    kind: 'bool',
    help: 'ask workers for prompt_token_ids_b64',
  },
  /** the router writes its own token ids into text and chat CTX requests (prompt_token_ids, as newest routers do) */
  writeTokenIds: {
    key: 'router.write_token_ids',
    kind: 'bool',
    help: 'router writes its ids into text/chat CTX requests',
  },
  /** each event poll on a new connection (a client pool reconnecting from a new port every time) */
  pollNewConnection: { key: 'router.poll_new_connection', kind: 'bool', help: 'each event poll on a new connection' },
  /** live only: the router tokenizes text and chat requests itself with this tokenizer; null = as the workers */
  tokenizer: {
    key: 'router.tokenizer',
    kind: 'optional-path',
    help: "live: the router tokenizes text/chat itself with this model folder (none = the workers' ids)",
    optional: true,
  },
} as const satisfies KnobTable;

/** The GEN step. */
export const GEN_KNOBS = {
  overheadMs: { key: 'gen.overhead', kind: 'duration', help: 'GEN step overhead' },
  msPerToken: { key: 'gen.ms_per_token', kind: 'number', help: 'decode time per output token' },
} as const satisfies KnobTable;

export type Section = 'workload' | 'ctx' | 'router' | 'gen';

export interface Knob {
  readonly kind: Kind;
  readonly section: Section;
  readonly field: string;
  readonly fault?: (value: unknown) => boolean;
  readonly help: string;
}

const SECTIONS: Readonly<Record<Section, KnobTable>> = {
  workload: WORKLOAD_KNOBS,
  ctx: CTX_KNOBS,
  router: ROUTER_KNOBS,
  gen: GEN_KNOBS,
};

/** every `--set` key, in the tables' order, with the section and field it sets */
export const KNOBS: Readonly<Record<string, Knob>> = Object.fromEntries(
  Object.entries(SECTIONS).flatMap(([section, table]) =>
    Object.entries(table).map(([field, spec]) => [
      spec.key,
      {
        kind: spec.kind,
        section: section as Section,
        field,
        ...(spec.fault !== undefined ? { fault: spec.fault } : {}),
        help: spec.help,
      },
    ]),
  ),
);
