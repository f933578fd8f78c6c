// The composition root of `kvsentinel serve`: one state fed by every source (relay ports, watch pollers, log
// followers, exclusive drainers); the exporter, the live feed and the landing page read the same snapshots.
// The daemon evaluates the rules on its own clock (evaluation-timer.ts); every reader only reads.
// Sources are reconciled by spec on reload: unchanged ones keep running (a relay keeps its event buffer and its
// consumers' cursors), removed ones stop, new ones start. An invalid new config changes nothing.
import { KvsentinelError } from '../../core/errors.js';
import { ConfigError } from '../config/config-error.js';
import type { Observation } from '../../core/observe/observation.js';
import { ReadRetentionPool } from '../../core/relay/read-retention.js';
import type { DiagnosisInput } from '../../core/diagnosis/rule.js';
import type { ReportModel } from '../../core/report/report-model.js';
import type { Timeline } from '../../core/report/timeline.js';
import type { JoinedEventListener } from '../../core/state/joined-events.js';
import {
  createSentinelState,
  type AppliedListener,
  type SentinelState,
  type SentinelStateSnapshot,
} from '../../core/state/sentinel-state.js';
import { createServerResolver, type ServerResolver } from '../../core/watch/server-resolver.js';
import { parseKvEvents } from '../../core/wire/parse-kv-events.js';
import { wasmApi } from '../../core/wasm/wasm-binary.js';
import type { Exporter, ReloadStatus } from '../../outputs/exporter.js';
import type { LiveFeed } from '../../outputs/live-feed.js';
import type { Clock, Logger, ObservationSink } from '../../sources/ports.js';
import { InflightTracker } from '../../sources/relay/inflight-tracker.js';
import type { ParseEvents } from '../../sources/relay/worker-relay.js';
import { SourceStatusBoard } from '../../sources/source-status.js';
import { ModelTokenizer } from '../../sources/tokenizer/model-tokenizer.js';
import { RenderPool } from '../../sources/tokenizer/render-pool.js';
import { relayHost, type ServeConfig } from '../config/serve-config.js';
import { STATE_PRESETS, stateOptionsFor } from '../state-presets.js';
import { configObservations } from './config-observations.js';
import { createDaemonOutputs, type DaemonOutputs } from './daemon-outputs.js';
import { DaemonSourceSet } from './daemon-source-set.js';
import { sourceSpecsFor, type RelayEndpoint, type SourceContext } from './daemon-sources.js';
import { startEvaluationTimer, type EvaluationTimer } from './evaluation-timer.js';
import { startTimelineSampler, type TimelineSampler } from './timeline-sampler.js';
import { startSidecarLoadMonitor, type SidecarLoadMonitor } from '../../sources/self/sidecar-load-monitor.js';

/** What the daemon needs from the state (createSentinelState satisfies it). */
export interface StatePort {
  apply(observation: Observation): void;
  /** runs the rules (the daemon's evaluation timer); see SentinelState.evaluate */
  evaluate(now: number): SentinelStateSnapshot;
  /** reads, changing nothing: the latest counters, the last evaluation's findings */
  snapshot(now: number): SentinelStateSnapshot;
  /** counters and findings of the last evaluation, from one input (a report); null before one */
  lastEvaluation(): SentinelStateSnapshot | null;
  /** the joined decisions and outcomes: the live feed shows them */
  subscribe(listener: JoinedEventListener): () => void;
  /** what the rules read (the report's inferred configuration); optional */
  diagnosisInput?(now: number): DiagnosisInput;
  /** every observation as applied, with its digest: the observation stream `audit --attach` reads; optional */
  onApplied?(listener: AppliedListener): () => void;
}

export interface DaemonDeps {
  readonly clock?: Clock;
  readonly logger?: Logger;
  readonly createState?: (config: ServeConfig) => StatePort;
  readonly parseEvents?: ParseEvents;
  /** re-reads the configuration on reload (SIGHUP, POST /-/reload); without it reload re-applies the current one */
  readonly loadConfig?: () => Promise<ServeConfig>;
  readonly revision?: string;
  /** false: no web server (a live audit needs sources and the state only) */
  readonly web?: boolean;
  /** what the live report at `/` says it watches (default: the daemon's sources since it started) */
  readonly reportDescription?: () => string;
  /** how often the daemon evaluates the rules while it serves readers, ms (default: the daemon preset's) */
  readonly evaluateEveryMs?: number;
}

export interface Daemon {
  start(): Promise<void>;
  /** Graceful: stops accepting, lets in-flight relay requests finish, stops pollers. Idempotent. */
  stop(): Promise<void>;
  /** During stop(): cut in-flight relay requests off instead of waiting for them. */
  hurry(): void;
  /** relay requests being answered now (stop() waits for them up to relay.shutdown_grace) */
  inFlightRelayRequests(): number;
  /** Loads and applies a new configuration; rejects (keeping the old one) when it is invalid. */
  reload(): Promise<void>;
  snapshot(): SentinelStateSnapshot;
  /** the report at `/` as data: counters since start, the sampled timeline, the inferred configuration */
  reportModel(): ReportModel;
  /** the state's snapshots sampled while the web server runs (null without it) */
  timeline(): Timeline | null;
  /** observations the daemon applied since it started (counted once, here: a tap need not count them again) */
  observations(): number;
  readonly status: SourceStatusBoard;
  readonly exporter: Exporter;
  readonly config: () => ServeConfig;
  webAddress(): { host: string; port: number };
  relayAddress(id: string): { host: string; port: number } | null;
  /** every listen address of that relay, one per consumer port */
  relayAddresses(id: string): { host: string; port: number }[];
}

export function defaultState(config: ServeConfig): SentinelState {
  return createSentinelState(stateOptionsFor('daemon', config));
}

/** What the daemon feeds every observation to: the state (a state bug never takes the data path down), counted. */
function stateSink(
  state: StatePort,
  deps: { readonly logger: Logger; readonly feed: () => LiveFeed | null },
): ObservationSink & { readonly applied: () => number } {
  let applied = 0;
  let stateErrors = 0;
  return {
    applied: () => applied,
    apply(o) {
      applied++;
      try {
        state.apply(o);
      } catch (err) {
        if (stateErrors++ < 20)
          deps.logger.error('state rejected an observation', { kind: o.kind, error: String(err) });
      }
      deps.feed()?.apply(o);
    },
  };
}

/** The server resolver of a configuration: names in logs and router answers (relay ports as bound) → server ids. */
function resolverFor(c: ServeConfig, relays: readonly RelayEndpoint[]): ServerResolver {
  const aliases: Record<string, string[]> = {};
  for (const r of c.relays) {
    aliases[r.id] = [r.upstream, `${relayHost(r)}:${r.port}`, `:${r.port}`];
    // port 0: the router (and its log lines) name the port the relay bound
    for (const s of relays) if (s.target.id === r.id) for (const a of s.addresses()) aliases[r.id]!.push(`:${a.port}`);
  }
  for (const x of c.ctx) aliases[x.id] = [x.url];
  return createServerResolver(aliases);
}

/** The configuration a reload may switch to: the web listener and the tokenizer stay until a restart. */
function checkReloadable(current: ServeConfig, next: ServeConfig): void {
  if (next.listen.host !== current.listen.host || next.listen.port !== current.listen.port) {
    throw new ConfigError(
      `web.listen_address cannot change on reload (${current.listen.host}:${current.listen.port} -> ${next.listen.host}:${next.listen.port}); restart instead`,
    );
  }
  if (next.tokenizer !== current.tokenizer)
    throw new ConfigError(
      `tokenizer.path cannot change on reload (${current.tokenizer ?? 'none'} -> ${next.tokenizer ?? 'none'}); restart instead`,
    );
}

/** What the daemon holds while it runs, changed by start, reload and stop. */
interface DaemonRuntime {
  config: ServeConfig;
  resolver: ServerResolver;
  reloadStatus: ReloadStatus;
  sampler: TimelineSampler | null;
  evaluations: EvaluationTimer | null;
  loadMonitor: SidecarLoadMonitor | null;
  started: boolean;
  ready: boolean;
  stopping: Promise<void> | undefined;
}

/** The daemon's parts, wired once by createDaemon. */
interface DaemonParts {
  readonly deps: DaemonDeps;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly serveWeb: boolean;
  readonly state: StatePort;
  readonly sink: ObservationSink;
  readonly status: SourceStatusBoard;
  readonly sources: DaemonSourceSet;
  readonly sourceContext: SourceContext;
  readonly outputs: DaemonOutputs;
  readonly render: RenderPool | undefined;
  /** what the relays, streams and the live feed counted of themselves, observed like everything else */
  readonly observeSidecarStats: () => void;
  readonly rt: DaemonRuntime;
}

async function reconcile(p: DaemonParts, c: ServeConfig): Promise<void> {
  p.sourceContext.readRetention.resize(c.relay.retainReadBytes);
  const failures = await p.sources.reconcile(sourceSpecsFor(c, p.sourceContext));
  // the relays' bound ports are known now
  p.rt.resolver = resolverFor(c, p.sources.relays());
  for (const o of configObservations(c, p.clock)) p.sink.apply(o);
  if (failures.length > 0) throw new KvsentinelError('start-failed', failures.join('; '));
}

async function startDaemon(p: DaemonParts): Promise<void> {
  const { rt, logger, clock, outputs } = p;
  if (rt.started) return;
  rt.started = true;
  // decided once per process (node --jitless, a big-endian host): the slow kernels, said where operators look
  if (wasmApi() === null)
    logger.warn('WebAssembly is not available: v1 block keys are mixed and prompt ids read in JavaScript (slower)');
  // the sidecar's own lag, so what it loses while behind is blamed on itself (sidecar-lagging)
  rt.loadMonitor = startSidecarLoadMonitor({ sink: p.sink, clock });
  // the daemon's clock: the sidecar's counters are observed on each tick; the rules evaluated when someone reads
  // them (without a web server a one-shot caller evaluates at its end)
  rt.evaluations = startEvaluationTimer(
    (now) => {
      if (p.sources.size > 0) p.observeSidecarStats();
      if (p.serveWeb) void p.state.evaluate(now);
    },
    clock,
    p.deps.evaluateEveryMs ?? STATE_PRESETS.daemon.evaluateEveryMs,
    (err) => logger.error('evaluating the rules failed', { error: String(err) }),
  );
  if (p.serveWeb) {
    await outputs.web.listen(rt.config.listen.host, rt.config.listen.port);
    outputs.feed.start();
    outputs.observationStream?.start();
    rt.sampler = startTimelineSampler(() => p.state.snapshot(clock()), clock);
  }
  await reconcile(p, rt.config);
  rt.ready = true;
  if (p.serveWeb) logServing(p);
}

async function reloadDaemon(p: DaemonParts): Promise<void> {
  const { rt, logger } = p;
  let next: ServeConfig;
  try {
    next = p.deps.loadConfig !== undefined ? await p.deps.loadConfig() : rt.config;
    checkReloadable(rt.config, next);
  } catch (err) {
    rt.reloadStatus = { ...rt.reloadStatus, successful: false };
    logger.error('reload failed; keeping the current configuration', {
      error: err instanceof Error ? err.message : String(err),
    });
    throw err;
  }
  rt.config = next;
  rt.resolver = resolverFor(next, p.sources.relays());
  try {
    await reconcile(p, next);
    rt.reloadStatus = { successful: true, lastSuccessAt: p.clock() };
    logger.info('configuration reloaded', { sources: p.sources.size });
  } catch (err) {
    rt.reloadStatus = { ...rt.reloadStatus, successful: false };
    throw err;
  }
}

async function stopDaemon(p: DaemonParts): Promise<void> {
  const { rt, outputs } = p;
  rt.ready = false;
  // what stopping aborts (a drain, a server_info read) is the shutdown, not a fault of the source
  p.status.silence();
  logInFlight(p);
  // relays first: they finish in-flight requests; pollers stop in parallel
  const hadSources = p.sources.size > 0;
  await p.sources.stopAll();
  // what they counted to the end, so a recorded bundle carries it
  if (hadSources) p.observeSidecarStats();
  rt.loadMonitor?.stop();
  rt.sampler?.stop();
  rt.evaluations?.stop();
  await outputs.feed.stop();
  await outputs.observationStream?.stop();
  await p.render?.close();
  if (rt.started && p.serveWeb) await outputs.web.close();
  p.logger.info('kvsentinel stopped');
}

function logServing(p: DaemonParts): void {
  const a = p.outputs.web.address();
  const listeners = p.sources.relays().map(
    (r) =>
      `${r.target.id}=${r
        .addresses()
        .map((x) => `${x.host}:${x.port}`)
        .join(',')}`,
  );
  p.logger.info('kvsentinel serving', {
    listen: `${a.host}:${a.port}`,
    sources: p.sources.size,
    ...(listeners.length > 0 ? { relays: listeners.join(' ') } : {}),
  });
}

function logInFlight(p: DaemonParts): void {
  const inFlight = inFlightOf(p.sources.relays());
  if (inFlight === 0) return;
  const graceS = p.rt.config.relay.shutdownGraceMs / 1000;
  p.logger.info(
    `letting ${inFlight} in-flight relay requests finish (up to relay.shutdown_grace ${graceS}s); signal again to stop now`,
    { in_flight: inFlight },
  );
}

const inFlightOf = (relays: readonly RelayEndpoint[]): number => relays.reduce((n, r) => n + r.inFlight, 0);

export function createDaemon(initial: ServeConfig, deps: DaemonDeps = {}): Daemon {
  const clock = deps.clock ?? Date.now;
  const logger = deps.logger ?? { info: () => undefined, warn: () => undefined, error: () => undefined };
  const rt: DaemonRuntime = {
    config: initial,
    resolver: resolverFor(initial, []),
    reloadStatus: { successful: true, lastSuccessAt: clock() },
    sampler: null,
    evaluations: null,
    loadMonitor: null,
    started: false,
    ready: false,
    stopping: undefined,
  };

  // the state, and the one sink every source feeds
  let feed: LiveFeed | null = null;
  const state = (deps.createState ?? defaultState)(initial);
  state.subscribe((event) => feed?.show(event));
  const startedAt = clock();
  const sink = stateSink(state, { logger, feed: () => feed });

  // the sources
  const status = new SourceStatusBoard({ sink, clock, logger });
  const sources = new DaemonSourceSet({ status, logger });
  const observeSidecarStats = (): void =>
    sink.apply({
      kind: 'sidecar-stats',
      ts: clock(),
      ...sources.stats(),
      feed: { droppedFrames: feed?.droppedFrames ?? 0, refusedClients: feed?.refusedClients ?? 0 },
    });

  // the outputs
  const outputs = createDaemonOutputs({
    state,
    status,
    clock,
    logger,
    config: () => rt.config,
    startedAt,
    revision: deps.revision,
    reportDescription: deps.reportDescription,
    observations: sink.applied,
    observeSidecarStats,
    reloadStatus: () => rt.reloadStatus,
    timeline: () => rt.sampler?.timeline,
    relays: () => sources.relays(),
    ready: () => rt.ready,
    reload: () => reloadDaemon(parts),
  });
  feed = outputs.feed;

  // the model's tokenizer (loadCliConfig checked it): renders text and chat requests off the event loop
  const render =
    initial.tokenizer !== null
      ? new RenderPool({ tokenizer: ModelTokenizer.load(initial.tokenizer), thread: true })
      : undefined;
  const sourceContext: SourceContext = {
    sink,
    status,
    clock,
    logger,
    parseEvents: deps.parseEvents ?? parseKvEvents,
    exporter: outputs.exporter,
    inflight: new InflightTracker(),
    render,
    resolve: (name) => rt.resolver(name),
    gates: new Map(),
    readRetention: new ReadRetentionPool(initial.relay.retainReadBytes),
  };
  const parts: DaemonParts = {
    deps,
    clock,
    logger,
    serveWeb: deps.web !== false,
    state,
    sink,
    status,
    sources,
    sourceContext,
    outputs,
    render,
    observeSidecarStats,
    rt,
  };
  const relayOf = (id: string): RelayEndpoint | undefined => sources.relays().find((r) => r.target.id === id);
  return {
    status,
    exporter: outputs.exporter,
    config: () => rt.config,
    snapshot: () => state.snapshot(clock()),
    observations: sink.applied,
    reportModel: () => outputs.pages.reportModel(),
    timeline: () => rt.sampler?.timeline ?? null,
    start: () => startDaemon(parts),
    reload: () => reloadDaemon(parts),
    stop: () => (rt.stopping ??= stopDaemon(parts)),
    inFlightRelayRequests: () => inFlightOf(sources.relays()),
    hurry() {
      for (const r of sources.relays()) r.hurry();
    },
    webAddress: () => outputs.web.address(),
    relayAddress: (id) => relayOf(id)?.address() ?? null,
    relayAddresses: (id) => relayOf(id)?.addresses() ?? [],
  };
}
