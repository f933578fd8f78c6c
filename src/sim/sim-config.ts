// Simulator configuration (its sections' shapes come from the knob tables, sim-knobs.ts), presets and `--set
// key=value` overrides. One workload and one set of model parameters serve every row of the calibration table; a
// row changes only the settings it names.
import { closestName } from '../core/closest-name.js';
import type { CtxWorkerConfig } from './ctx-worker.js';
import type { WorkloadConfig } from './workload.js';
import { KvsentinelError } from '../core/errors.js';
import { formatDuration, readDuration } from '../core/units.js';
import { KNOBS, type CTX_KNOBS, type GEN_KNOBS, type Kind, type ROUTER_KNOBS, type SectionOf } from './sim-knobs.js';

export type CtxConfig = SectionOf<typeof CTX_KNOBS>;
export type RouterConfig = SectionOf<typeof ROUTER_KNOBS>;
export type GenConfig = SectionOf<typeof GEN_KNOBS>;

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
    competitorPumpFromMs: null,
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

  /** a setting's own value is the command line's (`sim-config-invalid`, exit 2); a file it names can say otherwise */
  constructor(message: string, code: 'sim-config-invalid' | 'tokenizer-invalid' = 'sim-config-invalid') {
    super(code, message);
  }
}

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
    competitorPumpFromMs: c.competitorPumpFromMs,
    restartDowntimeMs: c.restartDowntimeMs,
  };
}
