// Simulator configuration, presets and `--set key=value` overrides. One workload and one set of model
// parameters serve every row of the calibration table; a row changes only the settings it names.
import { closestName } from '../core/closest-name.js';
import { HASH_ALGOS, type HashAlgo } from '../core/wire/kv-event.js';
import type { CtxWorkerConfig, RankAssignment } from './ctx-worker.js';
import { PUBLISHER_FORMATS, VLLM_SIM_HASHES, type KvEventsPublisher, type VllmSimHashes } from './publisher-format.js';
import { ROUTER_PROFILES, ROUTER_TYPES, type RouterType, type SimRouterProfile } from './routers/router.js';
import { REQUEST_FORMATS, type WorkloadConfig } from './workload.js';
import { KvsentinelError } from '../core/errors.js';
import { formatDuration, readDuration } from '../core/units.js';

export interface CtxConfig {
  readonly servers: number;
  readonly attentionDp: number;
  readonly tokensPerBlock: number;
  readonly gpuBlocksPerRank: number;
  readonly hostBlocksPerRank: number;
  readonly maxConcurrency: number;
  readonly prefillTokensPerSecond: number;
  readonly overheadMs: number;
  readonly rankAssignment: RankAssignment;
  readonly hashAlgo: HashAlgo;
  readonly eventBufferMaxSize: number;
  readonly kvEventsPush: boolean;
  /** live driver: publish KV events over ZMQ in this engine's format (implies the push path: pull returns []) */
  readonly kvEventsPublisher: KvEventsPublisher;
  /** with a publisher: a replay ROUTER per rank */
  readonly kvEventsReplay: boolean;
  /**
   * publisher vllm: the block hashes it publishes — the simulator's own ('sim'), or vLLM's sha256_cbor under
   * PYTHONHASHSEED=0 as bytes or as VLLM_KV_EVENTS_USE_INT_BLOCK_HASHES ints (kvsentinel then verifies them)
   */
  readonly vllmHashes: VllmSimHashes;
  readonly competingConsumer: boolean;
  readonly competitorPeriodMs: number;
  readonly adpGatherDrop: boolean;
  readonly gatherPeriodMs: number;
  readonly windowSize: number;
  /** ctx0 restarts at this virtual time (ms); null = never */
  readonly restartAtMs: number | null;
  readonly restartDowntimeMs: number;
  /** mean time between stalls of one CTX server (0 = never) */
  readonly stallEveryMs: number;
  /** mean stall duration (exponential) */
  readonly stallMs: number;
  /** live workers close idle keep-alive connections after this (real ms; trtllm-serve TIMEOUT_KEEP_ALIVE = 5 s) */
  readonly keepAliveTimeoutMs: number;
  /** live only: the workers tokenize text and chat requests with this tokenizer (a model folder); null = code points */
  readonly tokenizer?: string | null;
}

export interface RouterConfig {
  readonly type: RouterType;
  /** '2026-06' (default) or 'newest': score, tokens_per_block adoption, routed-block tracking, log lines */
  readonly profile?: SimRouterProfile;
  /** 0 = unset: the 2026-06 router uses 32, the newest adopts the worker's block size */
  readonly tokensPerBlock: number;
  /** newest: add the routed hashes on a successful finish (default true) */
  readonly trackRoutedBlocks?: boolean;
  /** newest: score = matches/tokens_per_block − load_weight·active (default 0.25) */
  readonly loadWeight?: number;
  /** newest: servers with active/max_batch_size ≥ load_cap are left out; 0 = no cap (default) */
  readonly loadCap?: number;
  readonly maxBatchSize: number;
  readonly backfillBlockHashesOnFinish: boolean;
  readonly pollOnFinish: boolean;
  readonly tokenDrift: boolean;
  /**
   * the orchestrator's CTX request bodies (live): JSON with X-Correlation-ID forwarded (older clients), or msgpack
   * flagged X-TRTLLM-Msgpack: 1 without it (newest, TRTLLM_SERVE_ENABLE_MSGSPEC=1)
   */
  readonly ctxBody: 'json' | 'msgpack';
  /** ask context workers for prompt_token_ids_b64 (disaggregated_params.return_prompt_token_ids_b64) */
  readonly returnPromptTokenIdsB64: boolean;
  /** the router writes its own token ids into text and chat CTX requests (prompt_token_ids, as newest routers do) */
  readonly writeTokenIds: boolean;
  /** each event poll on a new connection (a client pool reconnecting from a new port every time) */
  readonly pollNewConnection: boolean;
  /** live only: the router tokenizes text and chat requests itself with this tokenizer; null = as the workers */
  readonly tokenizer?: string | null;
}

export interface GenConfig {
  readonly overheadMs: number;
  readonly msPerToken: number;
}

export interface SimConfig {
  readonly preset: string;
  readonly workload: WorkloadConfig;
  readonly ctx: CtxConfig;
  readonly router: RouterConfig;
  readonly gen: GenConfig;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] extends object ? Mutable<T[K]> : T[K] };

/**
 * The bug report's deployment (docs/design.md §1): 3 CTX servers with attention-DP 4, c = 384, agentic-coding
 * trajectories (≈ 40k input, ≈ 300 output), worker block size 128, a large host cache, router defaults
 * (tokens_per_block 32, max_batch_size 64), and events off (event_buffer_max_size 0, the strongest candidate).
 * See src/sim/README.md for why these workload numbers are plausible.
 */
export const SEED_PRESET: SimConfig = {
  preset: 'seed',
  workload: {
    seed: 14882,
    concurrency: 384,
    trajectories: 1536,
    systemPrefixTokens: 2500,
    taskTokensMedian: 400,
    taskTokensSigma: 0.8,
    turnsMin: 22,
    turnsMax: 62,
    outputTokensMedian: 260,
    outputTokensSigma: 0.5,
    toolTokensMedian: 300,
    toolTokensSigma: 1.0,
    toolTokensMax: 32_000,
    toolBigProbability: 0.09,
    toolBigMedian: 8000,
    toolBigSigma: 0.7,
    toolLatencyMs: 500,
    rampMs: 2000,
    vocabSize: 129_280,
    requestFormat: 'token-ids',
  },
  ctx: {
    servers: 3,
    attentionDp: 4,
    tokensPerBlock: 128,
    gpuBlocksPerRank: 8192,
    hostBlocksPerRank: 65_536,
    maxConcurrency: 8,
    prefillTokensPerSecond: 8000,
    overheadMs: 150,
    rankAssignment: 'affinity',
    hashAlgo: 'v1_block_key',
    eventBufferMaxSize: 0,
    kvEventsPush: false,
    kvEventsPublisher: 'none',
    kvEventsReplay: true,
    vllmHashes: 'sim',
    competingConsumer: false,
    competitorPeriodMs: 250,
    adpGatherDrop: false,
    gatherPeriodMs: 5,
    windowSize: 131_072,
    restartAtMs: null,
    restartDowntimeMs: 3000,
    stallEveryMs: 20_000,
    stallMs: 12_000,
    keepAliveTimeoutMs: 5_000,
    tokenizer: null,
  },
  router: {
    type: 'kv_cache_aware',
    tokensPerBlock: 32,
    maxBatchSize: 64,
    backfillBlockHashesOnFinish: false,
    pollOnFinish: true,
    tokenDrift: false,
    ctxBody: 'json',
    returnPromptTokenIdsB64: false,
    writeTokenIds: false,
    pollNewConnection: false,
    tokenizer: null,
  },
  gen: { overheadMs: 200, msPerToken: 25 },
};

/** seed with the router's signal alive: events on, router block size = worker block size */
export const HEALTHY_PRESET: SimConfig = {
  ...SEED_PRESET,
  preset: 'healthy',
  ctx: { ...SEED_PRESET.ctx, eventBufferMaxSize: 10_000 },
  router: { ...SEED_PRESET.router, tokensPerBlock: 128 },
};

export const PRESETS: Readonly<Record<string, SimConfig>> = { seed: SEED_PRESET, healthy: HEALTHY_PRESET };

export class SimConfigError extends KvsentinelError {
  override readonly name = 'SimConfigError';

  constructor(message: string, options?: { cause?: unknown }) {
    super('sim-config-invalid', message, options);
  }
}

type Kind =
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
  'router.type': { kind: { oneOf: ROUTER_TYPES }, section: 'router', field: 'type', help: 'CTX router' },
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

function parseValue(key: string, kind: Kind, raw: string): unknown {
  const bad = (what: string): SimConfigError => new SimConfigError(`--set ${key}=${raw}: ${what}`);
  if (typeof kind === 'object') {
    if (!kind.oneOf.includes(raw)) throw bad(`expected one of ${kind.oneOf.join(', ')}`);
    return raw;
  }
  switch (kind) {
    case 'int':
    case 'posint': {
      const what = kind === 'posint' ? 'expected a positive integer' : 'expected a non-negative integer';
      if (!/^\d+$/.test(raw) || !Number.isSafeInteger(Number(raw))) throw bad(what);
      const value = Number(raw);
      if (kind === 'posint' && value < 1) throw bad(what);
      return value;
    }
    case 'number': {
      const value = Number(raw);
      if (raw.trim() === '' || !Number.isFinite(value) || value < 0) throw bad('expected a non-negative number');
      return value;
    }
    case 'bool':
      if (raw === 'true') return true;
      if (raw === 'false') return false;
      throw bad('expected true or false');
    case 'optional-path':
      if (raw === '') throw bad('expected a path (or none)');
      return raw === 'none' ? null : raw;
    case 'duration':
    case 'optional-duration': {
      if (kind === 'optional-duration' && (raw === 'never' || raw === 'none')) return null;
      const read = readDuration(raw);
      if ('ms' in read) return read.ms;
      throw bad(
        read.error === 'no-unit'
          ? `'${raw}' has no unit: write ${raw}s or ${raw}ms (docs/units.md)`
          : 'expected a duration such as 30s, 1500ms, 2m',
      );
    }
  }
}

function clone(config: SimConfig): Mutable<SimConfig> {
  return {
    preset: config.preset,
    workload: { ...config.workload },
    ctx: { ...config.ctx },
    router: { ...config.router },
    gen: { ...config.gen },
  };
}

/** applies `key=value` overrides; unknown keys and bad values throw SimConfigError naming the key */
export function applyOverrides(base: SimConfig, overrides: readonly string[]): SimConfig {
  const config = clone(base);
  for (const item of overrides) {
    const eq = item.indexOf('=');
    if (eq <= 0) throw new SimConfigError(`--set ${item}: expected key=value`);
    const key = item.slice(0, eq).trim();
    const raw = item.slice(eq + 1).trim();
    const knob = KNOBS[key];
    if (knob === undefined) {
      const near = closestName(key, Object.keys(KNOBS));
      throw new SimConfigError(
        `--set ${key}: unknown key${near !== null ? ` (did you mean ${near}?)` : ''}; \`kvsentinel sim keys\` lists every key`,
      );
    }
    (config[knob.section] as Record<string, unknown>)[knob.field] = parseValue(key, knob.kind, raw);
  }
  validate(config);
  return config;
}

function validate(config: SimConfig): void {
  const w = config.workload;
  if (w.turnsMin > w.turnsMax)
    throw new SimConfigError(`--set workload.turns_min=${w.turnsMin}: exceeds workload.turns_max=${w.turnsMax}`);
  if (config.ctx.maxConcurrency < 1) throw new SimConfigError('--set ctx.max_concurrency: must be at least 1');
  if (config.ctx.prefillTokensPerSecond <= 0)
    throw new SimConfigError('--set ctx.prefill_tokens_per_s: must be positive');
  if (config.ctx.vllmHashes !== 'sim' && config.ctx.kvEventsPublisher !== 'vllm')
    throw new SimConfigError(`--set ctx.vllm_hashes=${config.ctx.vllmHashes}: needs ctx.kv_events_publisher=vllm`);
}

export function presetConfig(name: string, overrides: readonly string[] = []): SimConfig {
  const preset = PRESETS[name];
  if (preset === undefined)
    throw new SimConfigError(`--preset ${name}: unknown preset (known: ${Object.keys(PRESETS).join(', ')})`);
  return applyOverrides(preset, overrides);
}

/** the fault knobs in effect, as key=value strings */
export function activeFaults(config: SimConfig): string[] {
  const faults: string[] = [];
  for (const [key, knob] of Object.entries(KNOBS)) {
    const value = (config[knob.section] as unknown as Record<string, unknown>)[knob.field];
    if (knob.fault?.(value) === true) faults.push(`${key}=${formatKnobValue(value, knob.kind)}`);
  }
  const unsetAdopts = config.router.tokensPerBlock === 0 && config.router.profile === 'newest';
  const effectiveTpb = config.router.tokensPerBlock === 0 ? 32 : config.router.tokensPerBlock;
  if (config.router.type === 'kv_cache_aware' && !unsetAdopts && effectiveTpb !== config.ctx.tokensPerBlock) {
    faults.push(`router.tokens_per_block=${config.router.tokensPerBlock}`);
  }
  return faults;
}

export interface KnobDescription {
  readonly key: string;
  readonly help: string;
  /** a value other than the healthy one injects a fault */
  readonly fault: boolean;
  /** the value in each preset */
  readonly values: Readonly<Record<string, string>>;
}

/** Every `--set` key with its meaning and its value in each preset (`kvsentinel sim keys`). */
export function describeKnobs(): KnobDescription[] {
  return Object.entries(KNOBS).map(([key, knob]) => ({
    key,
    help: knob.help,
    fault: knob.fault !== undefined,
    values: Object.fromEntries(
      Object.entries(PRESETS).map(([name, preset]) => [
        name,
        formatKnobValue((preset[knob.section] as unknown as Record<string, unknown>)[knob.field], knob.kind),
      ]),
    ),
  }));
}

function formatKnobValue(value: unknown, kind: Kind): string {
  if (value === null) return 'never';
  // what `--set` reads back: a duration with its unit
  if ((kind === 'duration' || kind === 'optional-duration') && typeof value === 'number') return formatDuration(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'string') return String(value);
  return JSON.stringify(value);
}

/** The settings of one CTX worker, as both drivers build it from the cluster config. */
export function ctxWorkerConfig(config: SimConfig, id: string): CtxWorkerConfig {
  const c = config.ctx;
  return {
    id,
    ranks: c.attentionDp,
    blockSize: c.tokensPerBlock,
    gpuBlocksPerRank: c.gpuBlocksPerRank,
    hostBlocksPerRank: c.hostBlocksPerRank,
    maxConcurrency: c.maxConcurrency,
    prefillTokensPerSecond: c.prefillTokensPerSecond,
    overheadMs: c.overheadMs,
    rankAssignment: c.rankAssignment,
    // TensorRT-LLM streams only from the V2 manager, whose keys are v2_sha256_64
    hashAlgo: c.kvEventsPublisher === 'trtllm' ? 'v2_sha256_64' : c.hashAlgo,
    eventBufferMaxSize: c.eventBufferMaxSize,
    kvEventsPush: c.kvEventsPush || c.kvEventsPublisher !== 'none',
    publishEvents: c.kvEventsPublisher !== 'none',
    adpGatherDrop: c.adpGatherDrop,
    gatherPeriodMs: c.gatherPeriodMs,
    windowSize: c.windowSize,
    restartDowntimeMs: c.restartDowntimeMs,
  };
}
