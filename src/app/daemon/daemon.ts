// The composition root of `kvsentinel serve`: one state fed by every source (relay ports, watch pollers, log
// followers, exclusive drainers); the exporter, the live feed and the landing page read the same snapshots.
// The daemon evaluates the rules on its own clock (evaluation-timer.ts); every reader only reads.
// Sources are reconciled by spec on reload: unchanged ones keep running (a relay keeps its event buffer and its
// consumers' cursors), removed ones stop, new ones start. An invalid new config changes nothing.
import { KvsentinelError } from '../../core/errors.js';
import { Registry } from 'prom-client';
import type { Observation } from '../../core/observe/observation.js';
import { buildAuditReport } from '../../core/report/audit-report.js';
import type { DiagnosisInput } from '../../core/diagnosis/rule.js';
import { buildReportModel, type ReportModel } from '../../core/report/report-model.js';
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
import { createExporter, type Exporter, type ReloadStatus } from '../../outputs/exporter.js';
import { renderLandingSections, type LandingInfo } from '../../outputs/landing-page.js';
import { LiveFeed } from '../../outputs/live-feed.js';
import { renderLiveReportBody, renderLiveReportPage } from '../../outputs/report/live-report-page.js';
import { formatDateTime } from '../../outputs/time-text.js';
import { WebServer } from '../../outputs/web-server.js';
import type { Clock, Logger, ObservationSink } from '../../sources/ports.js';
import { InflightTracker } from '../../sources/relay/inflight-tracker.js';
import type { ParseEvents, RelayCounters } from '../../sources/relay/worker-relay.js';
import { SourceStatusBoard } from '../../sources/source-status.js';
import { ModelTokenizer } from '../../sources/tokenizer/model-tokenizer.js';
import { RenderPool } from '../../sources/tokenizer/render-pool.js';
import type { StreamRankCounters } from '../../sources/zmq/stream-counters.js';
import type { ForwardCounters } from '../../sources/zmq/zmq-bind-source.js';
import { ConfigError } from '../config/config-error.js';
import { relayHost, type ServeConfig } from '../config/serve-config.js';
import { STATE_PRESETS, stateOptionsFor } from '../state-presets.js';
import { malformedInputs } from '../audit/audit-run.js';
import { VERSION } from '../version.js';
import {
  sourceSpecsFor,
  statusNamesOf,
  type DaemonSource,
  type RelayEndpoint,
  type SourceContext,
} from './daemon-sources.js';
import { RelayCounterTotals } from './relay-counter-totals.js';
import { createObservationStream } from './observation-stream-wiring.js';
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

export function createDaemon(initial: ServeConfig, deps: DaemonDeps = {}): Daemon {
  const clock = deps.clock ?? Date.now;
  const logger = deps.logger ?? { info: () => undefined, warn: () => undefined, error: () => undefined };
  const parseEvents = deps.parseEvents ?? parseKvEvents;
  let config = initial;
  let feed: LiveFeed | null = null;
  const state = (deps.createState ?? defaultState)(config);
  state.subscribe((event) => feed?.show(event));
  let stateErrors = 0;
  let observations = 0;
  const startedAt = clock();

  const sink: ObservationSink = {
    apply(o) {
      observations++;
      try {
        state.apply(o);
      } catch (err) {
        // a state bug must never take the data path down with it
        if (stateErrors++ < 20) logger.error('state rejected an observation', { kind: o.kind, error: String(err) });
      }
      feed?.apply(o);
    },
  };
  // the model's tokenizer (loadCliConfig checked it): renders text and chat requests off the event loop
  const render =
    initial.tokenizer !== null
      ? new RenderPool({ tokenizer: ModelTokenizer.load(initial.tokenizer), thread: true })
      : undefined;
  const status = new SourceStatusBoard({ sink, clock, logger });
  const snapshot = (): SentinelStateSnapshot => state.snapshot(clock());
  let sampler: TimelineSampler | null = null;
  let evaluations: EvaluationTimer | null = null;
  let loadMonitor: SidecarLoadMonitor | null = null;
  let reloadStatus: ReloadStatus = { successful: true, lastSuccessAt: clock() };
  const running = new Map<string, DaemonSource>();
  const relayTotals = new RelayCounterTotals();
  const relays = (): RelayEndpoint[] => [...running.values()].flatMap((s) => (s.kind === 'relay' ? [s.source] : []));
  const relayCounters = (): RelayCounters[] =>
    relayTotals.totals(relays().map((r) => ({ server: r.target.id, counters: r.counters() })));
  const streamCounters = (): StreamRankCounters[] =>
    [...running.values()].flatMap((s) => (s.kind === 'stream' ? s.source.counters() : []));
  const forwardCounters = (): ForwardCounters[] =>
    [...running.values()].flatMap((s) => (s.kind === 'stream' ? (s.source.forwardCounters?.() ?? []) : []));
  const exporter = createExporter({
    relays: relayCounters,
    streams: streamCounters,
    forwards: forwardCounters,
    feed: () => ({ droppedFrames: feed?.droppedFrames ?? 0, refusedClients: feed?.refusedClients ?? 0 }),
    registry: new Registry(),
    sources: () => status.list(),
    snapshot,
    reload: () => reloadStatus,
    build: { version: VERSION, revision: deps.revision ?? 'unknown', nodejsVersion: process.version },
    logger,
  });
  const reportModel = (): ReportModel => {
    const now = clock();
    // one evaluation for the whole page: headline, findings and the inferred configuration
    const snap = state.lastEvaluation() ?? state.snapshot(now);
    const audit = buildAuditReport(snap, {
      kind: 'live',
      description:
        deps.reportDescription?.() ??
        `kvsentinel serve: ${
          status
            .list()
            .map((s) => s.source)
            .join(', ') || 'no sources'
        }, since ${formatDateTime(startedAt)}`,
      observations,
      malformed: malformedInputs(status.list()),
    });
    const timeline = sampler?.timeline;
    return buildReportModel({
      version: VERSION,
      generatedAt: now,
      audit,
      samples: timeline?.samples ?? [],
      sampleIntervalMs: timeline?.intervalMs ?? null,
      input: state.diagnosisInput?.(snap.now) ?? null,
    });
  };
  feed = new LiveFeed({
    snapshot,
    clock,
    logger,
    version: VERSION,
    report: () => renderLiveReportBody(reportModel(), renderLandingSections(landingInfo())),
  });
  // the one-shot audit's way in that owns no port of the data path (`audit --attach`, `record --attach`)
  const observationStream = createObservationStream(state, { config: () => config, status, clock, logger });
  const inflight = new InflightTracker();
  let resolver: ServerResolver = resolverFor(config);
  let started = false;
  let ready = false;
  let stopping: Promise<void> | undefined;

  function landingInfo(): LandingInfo {
    let s: SentinelStateSnapshot | null = null;
    try {
      s = snapshot();
    } catch (err) {
      logger.error('snapshot failed', { error: String(err) });
    }
    let self: string | undefined;
    try {
      self = web.selfUrl();
    } catch {
      self = undefined; // not listening (a live audit has no web server)
    }
    return {
      version: VERSION,
      ...(self !== undefined ? { self } : {}),
      verdict: s?.verdict ?? null,
      findings: s?.findings ?? [],
      sources: status.list(),
      relays: relays().map((r) => {
        const a = r.address();
        const consumers = r.bufferStats().consumers.map((c) => ({
          consumer: c.consumer,
          backlog: c.backlog,
          delivered: c.delivered,
          dropped: c.dropped,
        }));
        return { id: r.target.id, listen: `${a.host}:${a.port}`, upstream: r.target.upstream, consumers };
      }),
    };
  }

  const web = new WebServer({
    exporter,
    feed,
    ...(observationStream !== null ? { observations: observationStream } : {}),
    landing: () => landingInfo(),
    page: () => renderLiveReportPage(reportModel(), renderLandingSections(landingInfo())),
    ready: () => ready,
    reload: () => daemon.reload(),
    bearerToken: () => config.bearerToken,
    logger,
  });

  function resolverFor(c: ServeConfig): ServerResolver {
    const aliases: Record<string, string[]> = {};
    for (const r of c.relays) {
      aliases[r.id] = [r.upstream, `${relayHost(r)}:${r.port}`, `:${r.port}`];
      // port 0: the router (and its log lines) name the port the relay bound
      for (const s of relays())
        if (s.target.id === r.id) for (const a of s.addresses()) aliases[r.id]!.push(`:${a.port}`);
    }
    for (const x of c.ctx) aliases[x.id] = [x.url];
    return createServerResolver(aliases);
  }

  const sourceContext: SourceContext = {
    sink,
    status,
    clock,
    logger,
    parseEvents,
    exporter,
    inflight,
    render,
    resolve: (name) => resolver(name),
    gates: new Map(),
  };

  async function reconcile(c: ServeConfig): Promise<void> {
    const wanted = new Map(sourceSpecsFor(c, sourceContext).map((s) => [s.key, s]));
    const removed = [...running].filter(([key]) => !wanted.has(key));
    // stop first: a changed relay frees its port before its replacement binds it
    await Promise.all(
      removed.map(async ([key, made]) => {
        running.delete(key);
        const { source } = made;
        status.silence(source.name);
        await source.stop();
        if (made.kind === 'relay') relayTotals.retire(made.source.target.id, made.source.counters());
        status.unregister(source.name);
        if (made.kind === 'stream') for (const name of made.source.sourceNames) status.unregister(name);
      }),
    );
    const failures: string[] = [];
    for (const [key, spec] of wanted) {
      if (running.has(key)) continue;
      const made = spec.make();
      const { source } = made;
      for (const name of statusNamesOf(made)) status.register(name);
      try {
        await source.start();
        running.set(key, made);
        logger.debug?.('source started', { source: source.name });
      } catch (err) {
        const message = `${source.name} did not start: ${err instanceof Error ? err.message : String(err)}`;
        status.fail(source.name, 'other', message);
        failures.push(message);
        status.silence(source.name);
        await source.stop().catch(() => undefined);
      }
    }
    // the relays' bound ports are known now
    resolver = resolverFor(c);
    const facts = c.router;
    sink.apply({
      kind: 'router-config',
      ts: clock(),
      source: 'config',
      routerType: facts.type,
      tokensPerBlock: facts.tokensPerBlock,
      maxBatchSize: facts.maxBatchSize,
      backfillBlockHashesOnFinish: facts.backfillBlockHashesOnFinish,
      servers: [...new Set([...c.relays.map((r) => r.id), ...c.ctx.map((x) => x.id), ...c.zmq.map((z) => z.id)])],
      profile: facts.profile,
      trackRoutedBlocks: facts.trackRoutedBlocks,
      loadWeight: facts.loadWeight,
      readsEvents: facts.readsEvents,
    });
    // what the operator states of the workers' capacity, as an observation a bundle records
    for (const [server, blocks] of Object.entries(c.kvCapacityBlocks))
      sink.apply({
        kind: 'server-info',
        ts: clock(),
        server,
        hashAlgo: null,
        tokensPerBlock: null,
        kvCapacityBlocks: blocks,
      });
    if (failures.length > 0) throw new KvsentinelError('start-failed', failures.join('; '));
  }

  const daemon: Daemon = {
    status,
    exporter,
    config: () => config,
    snapshot,
    reportModel,
    timeline: () => sampler?.timeline ?? null,
    async start() {
      if (started) return;
      started = true;
      // decided once per process (node --jitless, a big-endian host): the slow kernels, said where operators look
      if (wasmApi() === null)
        logger.warn('WebAssembly is not available: v1 block keys are mixed and prompt ids read in JavaScript (slower)');
      // the sidecar's own lag, so what it loses while behind is blamed on itself (sidecar-lagging)
      loadMonitor = startSidecarLoadMonitor({ sink, clock });
      const serveWeb = deps.web !== false;
      if (serveWeb) {
        // without a web server nothing reads the daemon's evaluations: a one-shot caller evaluates at its end
        evaluations = startEvaluationTimer(
          (now) => void state.evaluate(now),
          clock,
          deps.evaluateEveryMs ?? STATE_PRESETS.daemon.evaluateEveryMs,
          (err) => logger.error('evaluating the rules failed', { error: String(err) }),
        );
        await web.listen(config.listen.host, config.listen.port);
        feed?.start();
        observationStream?.start();
        sampler = startTimelineSampler(snapshot, clock);
      }
      await reconcile(config);
      ready = true;
      if (serveWeb) {
        const a = web.address();
        const listeners = relays().map(
          (r) =>
            `${r.target.id}=${r
              .addresses()
              .map((x) => `${x.host}:${x.port}`)
              .join(',')}`,
        );
        logger.info('kvsentinel serving', {
          listen: `${a.host}:${a.port}`,
          sources: running.size,
          ...(listeners.length > 0 ? { relays: listeners.join(' ') } : {}),
        });
      }
    },
    async reload() {
      let next: ServeConfig;
      try {
        next = deps.loadConfig !== undefined ? await deps.loadConfig() : config;
        if (next.listen.host !== config.listen.host || next.listen.port !== config.listen.port) {
          throw new ConfigError(
            `web.listen_address cannot change on reload (${config.listen.host}:${config.listen.port} -> ${next.listen.host}:${next.listen.port}); restart instead`,
          );
        }
        if (next.tokenizer !== config.tokenizer)
          throw new ConfigError(
            `tokenizer.path cannot change on reload (${config.tokenizer ?? 'none'} -> ${next.tokenizer ?? 'none'}); restart instead`,
          );
      } catch (err) {
        reloadStatus = { ...reloadStatus, successful: false };
        logger.error('reload failed; keeping the current configuration', {
          error: err instanceof Error ? err.message : String(err),
        });
        throw err;
      }
      config = next;
      resolver = resolverFor(next);
      try {
        await reconcile(next);
        reloadStatus = { successful: true, lastSuccessAt: clock() };
        logger.info('configuration reloaded', { sources: running.size });
      } catch (err) {
        reloadStatus = { ...reloadStatus, successful: false };
        throw err;
      }
    },
    stop() {
      stopping ??= (async () => {
        ready = false;
        // what stopping aborts (a drain, a server_info read) is the shutdown, not a fault of the source
        status.silence();
        const inFlight = daemon.inFlightRelayRequests();
        if (inFlight > 0) {
          const graceS = config.relay.shutdownGraceMs / 1000;
          logger.info(
            `letting ${inFlight} in-flight relay requests finish (up to relay.shutdown_grace ${graceS}s); signal again to stop now`,
            { in_flight: inFlight },
          );
        }
        // relays first: they finish in-flight requests; pollers stop in parallel
        await Promise.all([...running.values()].map((s) => s.source.stop()));
        running.clear();
        loadMonitor?.stop();
        sampler?.stop();
        evaluations?.stop();
        await feed?.stop();
        await observationStream?.stop();
        await render?.close();
        if (started && deps.web !== false) await web.close();
        logger.info('kvsentinel stopped');
      })();
      return stopping;
    },
    inFlightRelayRequests: () => relays().reduce((n, r) => n + r.inFlight, 0),
    hurry() {
      for (const r of relays()) r.hurry();
    },
    webAddress: () => web.address(),
    relayAddress: (id) =>
      relays()
        .find((r) => r.target.id === id)
        ?.address() ?? null,
    relayAddresses: (id) =>
      relays()
        .find((r) => r.target.id === id)
        ?.addresses() ?? [],
  };
  return daemon;
}
