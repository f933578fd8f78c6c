// Rows of the fault matrix (issue items 5/6) on the virtual-time driver: every simulator fault, the healthy configuration,
// the conversation router, and watch mode (logs only, with and without the router debug endpoint). Each row runs
// the simulator at a reduced size (c = 48 instead of 384; prompts ~8k instead of ~40k tokens) and feeds what
// kvsentinel would observe into one state; the audit must report exactly the expected critical findings.
//
// Scale: the bug report runs c = 384 over 3 CTX servers (~128 active requests per server) with the router's
// max_batch_size 64 (load term ≈ 2); the fixed configuration uses 512 (≈ 0.25). At c = 48 (~16 per server) the
// same ratios are max_batch_size 8 and 64, so rows derived from the seed use 8 and rows derived from the healthy
// configuration 64.
//
// Expected findings (critical exactly; warnings: those listed must be present; healthy rows: no warning at all):
//
// | row                                   | critical                                                              | warning (at least)                |
// |---------------------------------------|-----------------------------------------------------------------------|-----------------------------------|
// | healthy                               | —                                                                     | — (verdict healthy)               |
// | seed (events off, tpb 32, mbs 8)      | events-absent, tokens-per-block-mismatch, router-table-empty, inert   | turn-scatter, hit-below-oracle    |
// | router.max_batch_size=1               | —                                                                     | load-term-dominates               |
// | ctx.event_buffer_max_size=0           | events-absent, router-table-empty, cache-signal-inert                 | turn-scatter-high                 |
// | ctx.kv_events_push=true               | events-absent, router-table-empty, cache-signal-inert                 | turn-scatter-high                 |
// | ctx.competing_consumer=true           | event-queue-shared                                                    |                                   |
// | ctx.competitor_pump_from=40s          | event-queue-shared (naming every server: their drains stopped)        |                                   |
// | ctx.competitor_pump_from=0s           | events-absent (naming the pump as the other cause), router-table-empty, inert | turn-scatter-high        |
// | router.tokens_per_block=32            | tokens-per-block-mismatch, cache-signal-inert                         | turn-scatter-high                 |
// | router.token_drift=true               | router-hash-divergence, cache-signal-inert                            | turn-scatter-high                 |
// |   … relay without debug endpoint      | router-hash-divergence, cache-signal-inert                            |                                   |
// | relay, no debug endpoint, no orchestrator log (router settings unknown; tokens_per_block inferred from routing): |
// |   healthy                             | — (tokens_per_block 128 inferred)                                     | — (verdict healthy)               |
// |   seed                                | events-absent, cache-signal-inert (no tpb-mismatch on a guess)        | turn-scatter, hit-below-oracle    |
// |   router.tokens_per_block=32          | router-hash-divergence (naming tokens_per_block), cache-signal-inert  | turn-scatter-high                 |
// | healthy, all traffic on one server (max_batch_size 512, staggered starts): relay with / without router settings,  |
// |   watch logs only, through the log parsers | —                                                 | load-concentrated                 |
// | ctx.adp_gather_drop=true              | —                                                                     | events-partial-ranks              |
// | router.poll_on_finish=false           | router-not-polling, router-table-empty, cache-signal-inert            | turn-scatter-high                 |
// | ctx.restart_at=20s                    | — (info: event-stream-reset)                                          | —                                 |
// | conversation router on the seed       | —                                                                     | — (verdict healthy)               |
// |   … caches under pressure (events off: the sticky ideal counts what each turn back on its server reused) | — (healthy) |
// | watch, seed, with debug endpoint      | tokens-per-block-mismatch, router-table-empty, cache-signal-inert     | turn-scatter-high                 |
// | watch, seed, logs only                | tokens-per-block-mismatch, cache-signal-inert                         | turn-scatter-high                 |
// | watch, healthy, with / without debug  | —                                                                     | — (verdict healthy)               |
// | watch + prompt_token_ids: like logs only (seed inert, healthy quiet)                                                          |
// | logs only, parsed by kvsentinel: seed | tokens-per-block-mismatch, cache-signal-inert                         | turn-scatter-high                 |
// | logs only, parsed by kvsentinel: ok   | —                                                                     | — (verdict healthy)               |
import { buildAuditReport, type AuditReport } from '../../src/core/report/audit-report.js';
import type { Observation } from '../../src/core/observe/observation.js';
import { createSentinelState } from '../../src/core/state/sentinel-state.js';
import { parseOrchestratorLogLine } from '../../src/core/watch/orchestrator-log.js';
import { parseRequestLogLine } from '../../src/core/watch/request-log.js';
import { createServerResolver } from '../../src/core/watch/server-resolver.js';
import { runVirtual, serverIds } from '../../src/sim/run-virtual.js';
import { presetConfig } from '../../src/sim/sim-config.js';

export const REDUCED_SCALE = [
  'workload.concurrency=48',
  'workload.trajectories=120',
  'workload.system_prefix_tokens=2000',
  'workload.task_tokens_median=800',
  'workload.turns_min=6',
  'workload.turns_max=14',
  'workload.tool_tokens_median=200',
  'workload.tool_tokens_max=4000',
  'workload.output_tokens_median=100',
];
const SEED = ['router.max_batch_size=8'];
/**
 * A healthy router with a tiny load term (max_batch_size 512 at c = 48) and staggered starts: the shared system
 * prefix pulls every request to the server that cached it first (all traffic on ctx0, hit = oracle).
 */
const CONCENTRATED = ['router.max_batch_size=512', 'workload.ramp=60s', 'workload.system_prefix_tokens=4000'];
const HEALTHY = ['router.max_batch_size=64'];
/** caches that evict (150 GPU blocks per rank, no host tier): the system prefix stays, conversations churn */
export const PRESSURE = ['ctx.gpu_blocks=150', 'ctx.host_blocks=0'];

export interface Row {
  readonly name: string;
  readonly preset: 'seed' | 'healthy';
  readonly set: readonly string[];
  /** watch-logs: only the simulator's request log and orchestrator log, parsed by kvsentinel's own log parsers */
  readonly tap: 'relay' | 'watch' | 'watch-logs';
  /** watch: the request log carries prompt_token_ids (decisions then have keys, but no events to match them) */
  readonly tokenIds?: boolean;
  /** relay: also the router debug endpoint (router-state / router-score observations); watch: the same */
  readonly debug: boolean;
  /**
   * relay: false = no source states the router's settings (no debug endpoint, no orchestrator log): the state
   * only learns the server list, as the daemon's own configuration gives it; tokens_per_block is inferred
   */
  readonly routerSettings?: boolean;
  /** relay: also the orchestrator log, through kvsentinel's parser (as --orchestrator-log gives it) */
  readonly orchestratorLog?: boolean;
  /** the operator states each worker's KV capacity (kv_capacity_blocks: ranks × (GPU + host blocks)) */
  readonly kvCapacity?: boolean;
  /** the operator states the router's type in the configuration (router.type) */
  readonly statedRouterType?: string;
  /** finding id → text its cause or summary must contain */
  readonly says?: Readonly<Record<string, string>>;
  readonly critical: readonly string[];
  readonly warnings: readonly string[];
  /** no warning or critical finding at all */
  readonly healthy?: boolean;
}

const INERT_EVENTS = ['events-absent', 'router-table-empty', 'cache-signal-inert'];
/** the newest router.py (router.profile=newest): load_weight 0.25, routed-block tracking on */
const NEWEST = ['router.profile=newest'];

export const FAULT_MATRIX: readonly Row[] = [
  {
    name: 'healthy',
    preset: 'healthy',
    set: HEALTHY,
    tap: 'relay',
    debug: true,
    critical: [],
    warnings: [],
    healthy: true,
  },
  {
    name: 'seed',
    preset: 'seed',
    set: SEED,
    tap: 'relay',
    debug: true,
    critical: ['events-absent', 'tokens-per-block-mismatch', 'router-table-empty', 'cache-signal-inert'],
    warnings: ['turn-scatter-high', 'hit-rate-below-oracle'],
  },
  {
    name: 'router.max_batch_size=1 (load term outweighs a live cache term)',
    preset: 'healthy',
    set: ['router.max_batch_size=1'],
    tap: 'relay',
    debug: true,
    critical: [],
    warnings: ['load-term-dominates'],
  },
  {
    name: 'ctx.event_buffer_max_size=0',
    preset: 'healthy',
    set: [...HEALTHY, 'ctx.event_buffer_max_size=0'],
    tap: 'relay',
    debug: true,
    critical: INERT_EVENTS,
    warnings: ['turn-scatter-high'],
  },
  {
    name: 'ctx.kv_events_push=true',
    preset: 'healthy',
    set: [...HEALTHY, 'ctx.kv_events_push=true'],
    tap: 'relay',
    debug: true,
    critical: INERT_EVENTS,
    warnings: ['turn-scatter-high'],
  },
  {
    name: 'ctx.competing_consumer=true',
    preset: 'healthy',
    set: [...HEALTHY, 'ctx.competing_consumer=true'],
    tap: 'relay',
    debug: true,
    critical: ['event-queue-shared'],
    warnings: [],
  },
  // a pump (KvEventFanout-style) starts taking every event as it is queued: no later event_id shows a gap
  {
    name: 'ctx.competitor_pump_from=40s (another consumer takes each queue whole)',
    preset: 'healthy',
    set: [...HEALTHY, 'ctx.competitor_pump_from=40s'],
    tap: 'relay',
    debug: true,
    critical: ['event-queue-shared'],
    warnings: [],
    says: { 'event-queue-shared': 'stopped bringing events while' },
  },
  // … from the start: nothing tells it from events off, and events-absent says so
  {
    name: 'ctx.competitor_pump_from=0s',
    preset: 'healthy',
    set: [...HEALTHY, 'ctx.competitor_pump_from=0s'],
    tap: 'relay',
    debug: true,
    critical: INERT_EVENTS,
    warnings: ['turn-scatter-high'],
    says: { 'events-absent': 'another consumer that takes every event the moment it is queued' },
  },
  {
    name: 'router.tokens_per_block=32',
    preset: 'healthy',
    set: [...HEALTHY, 'router.tokens_per_block=32'],
    tap: 'relay',
    debug: true,
    critical: ['tokens-per-block-mismatch', 'cache-signal-inert'],
    warnings: ['turn-scatter-high'],
  },
  {
    name: 'router.token_drift=true',
    preset: 'healthy',
    set: [...HEALTHY, 'router.token_drift=true'],
    tap: 'relay',
    debug: true,
    critical: ['router-hash-divergence', 'cache-signal-inert'],
    warnings: ['turn-scatter-high'],
  },
  {
    name: 'router.token_drift=true, relay without debug endpoint',
    preset: 'healthy',
    set: [...HEALTHY, 'router.token_drift=true'],
    tap: 'relay',
    debug: false,
    critical: ['router-hash-divergence', 'cache-signal-inert'],
    warnings: [],
  },
  {
    name: 'healthy, relay mode, no debug endpoint, no orchestrator log',
    preset: 'healthy',
    set: HEALTHY,
    tap: 'relay',
    debug: false,
    routerSettings: false,
    critical: [],
    warnings: [],
    healthy: true,
  },
  {
    name: 'seed, relay mode, no debug endpoint, no orchestrator log',
    preset: 'seed',
    set: SEED,
    tap: 'relay',
    debug: false,
    routerSettings: false,
    critical: ['events-absent', 'cache-signal-inert'],
    warnings: ['turn-scatter-high', 'hit-rate-below-oracle'],
  },
  {
    name: 'router.tokens_per_block=32, relay mode, no debug endpoint, no orchestrator log',
    preset: 'healthy',
    set: [...HEALTHY, 'router.tokens_per_block=32'],
    tap: 'relay',
    debug: false,
    routerSettings: false,
    critical: ['router-hash-divergence', 'cache-signal-inert'],
    warnings: ['turn-scatter-high'],
  },
  {
    name: 'healthy, concentrated on one server (max_batch_size 512)',
    preset: 'healthy',
    set: CONCENTRATED,
    tap: 'relay',
    debug: true,
    critical: [],
    warnings: ['load-concentrated'],
  },
  {
    name: 'healthy, concentrated, relay mode, no debug endpoint, no orchestrator log',
    preset: 'healthy',
    set: CONCENTRATED,
    tap: 'relay',
    debug: false,
    routerSettings: false,
    critical: [],
    warnings: ['load-concentrated'],
  },
  // logs only: no in-flight counts, and stickiness by chance is 100% when one server takes everything — cannot tell
  {
    name: 'watch, healthy, concentrated, logs only',
    preset: 'healthy',
    set: CONCENTRATED,
    tap: 'watch',
    debug: false,
    critical: [],
    warnings: ['load-concentrated', 'evidence-insufficient'],
  },
  {
    name: 'watch, healthy, concentrated, through the log parsers',
    preset: 'healthy',
    // a build whose log names its servers and its config (max_batch_size): the stock router.py logs neither
    set: [...CONCENTRATED, 'router.log_format=formatted'],
    tap: 'watch-logs',
    debug: false,
    critical: [],
    warnings: ['load-concentrated', 'evidence-insufficient'],
  },
  // the newest router (issue #14's table): never inert while routed-block tracking keeps routing on prefixes
  {
    name: 'newest, tokens_per_block unset (adopts 128), relay + orchestrator log',
    preset: 'healthy',
    set: [...NEWEST, 'router.tokens_per_block=0'],
    tap: 'relay',
    debug: false,
    routerSettings: false,
    orchestratorLog: true,
    critical: [],
    warnings: [],
    healthy: true,
  },
  {
    name: 'newest, tokens_per_block unset, relay only',
    preset: 'healthy',
    set: [...NEWEST, 'router.tokens_per_block=0'],
    tap: 'relay',
    debug: false,
    routerSettings: false,
    critical: [],
    warnings: [],
    healthy: true,
  },
  {
    name: 'newest, events off, routed-block tracking on, relay + orchestrator log',
    preset: 'healthy',
    set: [...NEWEST, 'router.tokens_per_block=0', 'ctx.event_buffer_max_size=0'],
    tap: 'relay',
    debug: false,
    routerSettings: false,
    orchestratorLog: true,
    critical: ['events-absent'],
    warnings: ['event-signal-masked'],
    says: { 'event-signal-masked': 'routed-block tracking' },
  },
  {
    name: 'newest, events off, relay only',
    preset: 'healthy',
    set: [...NEWEST, 'router.tokens_per_block=0', 'ctx.event_buffer_max_size=0'],
    tap: 'relay',
    debug: false,
    routerSettings: false,
    critical: ['events-absent'],
    warnings: ['event-signal-masked'],
  },
  {
    name: 'newest, tokens_per_block 32 vs 128 (polling skipped by design), relay + orchestrator log',
    preset: 'healthy',
    set: [...NEWEST, 'router.tokens_per_block=32'],
    tap: 'relay',
    debug: false,
    routerSettings: false,
    orchestratorLog: true,
    // the router skips their polling on purpose and copes: the cause is the block-size mismatch, nothing critical
    critical: [],
    warnings: ['event-signal-masked', 'tokens-per-block-mismatch'],
    says: {
      'tokens-per-block-mismatch': 'skips their event polling by design',
      'event-signal-masked': 'skips event polling by design',
    },
  },
  {
    name: 'newest, tokens_per_block 32 vs 128, relay only',
    preset: 'healthy',
    set: [...NEWEST, 'router.tokens_per_block=32'],
    tap: 'relay',
    debug: false,
    routerSettings: false,
    // nothing says what kind of router runs, and it never polled: a warning that names both readings
    critical: [],
    warnings: ['event-signal-masked', 'router-not-polling'],
    says: { 'router-not-polling': 'skipping polls on a tokens_per_block mismatch' },
  },
  {
    name: 'ctx.adp_gather_drop=true',
    preset: 'healthy',
    set: [...HEALTHY, 'ctx.adp_gather_drop=true'],
    tap: 'relay',
    debug: true,
    critical: [],
    warnings: ['events-partial-ranks'],
  },
  {
    name: 'router.poll_on_finish=false',
    preset: 'healthy',
    set: [...HEALTHY, 'router.poll_on_finish=false'],
    tap: 'relay',
    debug: true,
    critical: ['router-not-polling', 'router-table-empty', 'cache-signal-inert'],
    warnings: ['turn-scatter-high'],
  },
  {
    name: 'ctx.restart_at=20s',
    preset: 'healthy',
    set: [...HEALTHY, 'ctx.restart_at=20s'],
    tap: 'relay',
    debug: true,
    critical: [],
    warnings: [],
    healthy: true,
  },
  // issue 24 item 5: routers that read no events, in front of workers with events on
  {
    name: 'conversation router, events on, relay only (its kind unknown)',
    preset: 'healthy',
    set: [...HEALTHY, 'router.type=conversation'],
    tap: 'relay',
    debug: false,
    routerSettings: false,
    // it never polls: a warning that names a router reading no events by design as one reading, never critical
    critical: [],
    warnings: ['router-not-polling'],
    says: { 'router-not-polling': 'ConversationRouter' },
  },
  ...(['conversation', 'round_robin', 'load_balancing'] as const).map((type): Row => ({
    name: `${type} router, events on, router.type stated in the config`,
    preset: 'healthy',
    set: [...HEALTHY, `router.type=${type}`],
    tap: 'relay',
    debug: false,
    routerSettings: false,
    statedRouterType: type,
    critical: [],
    // round-robin and load-balancing routers never route on the cache: inert by design, a warning, not a critical
    warnings: type === 'conversation' ? [] : ['cache-signal-inert'],
    ...(type === 'conversation' ? {} : { says: { 'cache-signal-inert': 'by design' } }),
  })),
  {
    name: 'conversation router on the seed faults',
    preset: 'seed',
    set: [...SEED, 'router.type=conversation'],
    tap: 'relay',
    debug: true,
    critical: [],
    warnings: [],
    healthy: true,
  },
  // issue 23 item 9: a sticky router at the true optimum (77.3%) was told 92.2% was achievable — the sticky ideal
  // credited every turn its earlier turn although the server's cache had evicted it
  {
    name: 'conversation router on the seed faults, caches under pressure (gpu 150 blocks/rank, no host tier)',
    preset: 'seed',
    set: [...SEED, 'router.type=conversation', ...PRESSURE],
    tap: 'relay',
    debug: true,
    critical: [],
    warnings: [],
    healthy: true,
  },
  {
    name: 'watch, conversation router, logs only, caches under pressure',
    preset: 'seed',
    set: [...SEED, 'router.type=conversation', ...PRESSURE],
    tap: 'watch',
    debug: false,
    critical: [],
    warnings: [],
    healthy: true,
  },
  {
    name: 'seed, caches under pressure, capacity configured',
    preset: 'seed',
    set: [...SEED, ...PRESSURE],
    tap: 'relay',
    debug: true,
    kvCapacity: true,
    critical: ['events-absent', 'tokens-per-block-mismatch', 'router-table-empty', 'cache-signal-inert'],
    warnings: ['turn-scatter-high', 'hit-rate-below-oracle'],
  },
  {
    name: 'watch, seed, request log + orchestrator log + debug endpoint',
    preset: 'seed',
    set: SEED,
    tap: 'watch',
    debug: true,
    critical: ['tokens-per-block-mismatch', 'router-table-empty', 'cache-signal-inert'],
    warnings: ['turn-scatter-high'],
  },
  {
    name: 'watch, seed, request log + orchestrator log only',
    preset: 'seed',
    set: SEED,
    tap: 'watch',
    debug: false,
    critical: ['tokens-per-block-mismatch', 'cache-signal-inert'],
    warnings: ['turn-scatter-high'],
  },
  {
    name: 'watch, healthy, with debug endpoint',
    preset: 'healthy',
    set: HEALTHY,
    tap: 'watch',
    debug: true,
    critical: [],
    warnings: [],
    healthy: true,
  },
  {
    name: 'watch, healthy, logs only',
    preset: 'healthy',
    set: HEALTHY,
    tap: 'watch',
    debug: false,
    critical: [],
    warnings: [],
    healthy: true,
  },
  {
    name: 'watch, seed, logs only, request log with prompt_token_ids',
    preset: 'seed',
    set: SEED,
    tap: 'watch',
    debug: false,
    tokenIds: true,
    critical: ['tokens-per-block-mismatch', 'cache-signal-inert'],
    warnings: ['turn-scatter-high'],
  },
  {
    name: 'watch, healthy, logs only, request log with prompt_token_ids',
    preset: 'healthy',
    set: HEALTHY,
    tap: 'watch',
    debug: false,
    tokenIds: true,
    critical: [],
    warnings: [],
    healthy: true,
  },
  {
    name: 'watch, seed, request-log and orchestrator-log lines through the log parsers',
    preset: 'seed',
    // the workers' block size comes from a ready line that names its server (the stock one names none)
    set: [...SEED, 'router.log_format=formatted'],
    tap: 'watch-logs',
    debug: false,
    critical: ['tokens-per-block-mismatch', 'cache-signal-inert'],
    warnings: ['turn-scatter-high'],
  },
  {
    name: 'watch, healthy, request-log and orchestrator-log lines through the log parsers',
    preset: 'healthy',
    set: HEALTHY,
    tap: 'watch-logs',
    debug: false,
    critical: [],
    warnings: [],
    healthy: true,
  },
];

const DEBUG_KINDS = new Set<Observation['kind']>(['router-state', 'router-score']);

/** The simulator writes its request log and orchestrator log; kvsentinel's own parsers turn the lines into observations. */
function auditLogs(row: Row): AuditReport {
  const state = createSentinelState({ mode: 'watch' });
  const resolve = createServerResolver({});
  let observations = 0;
  let last = 0;
  const feed = (list: readonly Observation[]): void => {
    for (const obs of list) {
      observations++;
      last = Math.max(last, obs.ts);
      state.apply(obs);
    }
  };
  let lineNo = 0;
  runVirtual(presetConfig(row.preset, [...REDUCED_SCALE, ...row.set]), {
    orchestratorLog: (line) => feed(parseOrchestratorLogLine(line, last, resolve)),
    requestLog: (line) => {
      const parsed = parseRequestLogLine(line, ++lineNo, 'canonical', { now: last, resolve });
      if (parsed.issue !== null) throw new Error(parsed.issue.message);
      feed(parsed.observations);
    },
  });
  return buildAuditReport(state.evaluate(last), {
    kind: 'live',
    description: `logs ${row.name}`,
    observations,
    malformed: 0,
  });
}

/** Runs one row on the virtual-time driver and audits what kvsentinel would have observed. */
export function auditRow(row: Row): AuditReport {
  if (row.tap === 'watch-logs') return auditLogs(row);
  const state = createSentinelState({ mode: row.tap === 'relay' ? 'relay' : 'watch' });
  let observations = 0;
  let last = 0;
  const resolve = createServerResolver({});
  const config = presetConfig(row.preset, [...REDUCED_SCALE, ...row.set]);
  if (row.statedRouterType !== undefined)
    state.apply({
      kind: 'router-config',
      ts: 0,
      source: 'config',
      routerType: row.statedRouterType,
      tokensPerBlock: null,
      maxBatchSize: null,
      backfillBlockHashesOnFinish: null,
      servers: null,
    });
  if (row.kvCapacity === true)
    for (const server of serverIds(config.ctx.servers))
      state.apply({
        kind: 'server-info',
        ts: 0,
        server,
        hashAlgo: null,
        tokensPerBlock: null,
        kvCapacityBlocks: config.ctx.attentionDp * (config.ctx.gpuBlocksPerRank + config.ctx.hostBlocksPerRank),
      });
  runVirtual(config, {
    ...(row.orchestratorLog === true
      ? {
          orchestratorLog: (line: string) => {
            for (const obs of parseOrchestratorLogLine(line, last, resolve)) state.apply(obs);
          },
        }
      : {}),
    tap: row.tap,
    watchDebugEndpoint: row.debug,
    watchPromptTokenIds: row.tokenIds === true,
    onObservation: (observed) => {
      if (!row.debug && DEBUG_KINDS.has(observed.kind)) return;
      const obs: Observation =
        observed.kind === 'router-config' && row.routerSettings === false
          ? {
              ...observed,
              source: 'config',
              routerType: null,
              tokensPerBlock: null,
              maxBatchSize: null,
              backfillBlockHashesOnFinish: null,
              profile: null,
              trackRoutedBlocks: null,
              loadWeight: null,
            }
          : observed;
      observations++;
      last = Math.max(last, obs.ts);
      state.apply(obs);
    },
  });
  return buildAuditReport(state.evaluate(last), {
    kind: 'live',
    description: `virtual ${row.name}`,
    observations,
    malformed: 0,
  });
}
