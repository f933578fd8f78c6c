// The composition root of `kvsentinel serve`: one state fed by every source (relay ports, watch pollers, log
// followers, exclusive drainers); the exporter, the live feed and the landing page read the same snapshots.
// Sources are reconciled by spec on reload: unchanged ones keep running (a relay keeps its event buffer and its
// consumers' cursors), removed ones stop, new ones start. An invalid new config changes nothing.
import { Registry } from 'prom-client';
import type { Observation } from '../../core/observe/observation.js';
import { buildAuditReport } from '../../core/diagnosis/audit-report.js';
import type { DiagnosisInput } from '../../core/diagnosis/rule.js';
import { buildReportModel, type ReportModel } from '../../core/report/report-model.js';
import type { Timeline } from '../../core/report/timeline.js';
import type { JoinedEventListener } from '../../core/state/joined-events.js';
import { createSentinelState, type SentinelState, type SentinelStateSnapshot } from '../../core/state/sentinel-state.js';
import { createServerResolver, type ServerResolver } from '../../core/watch/server-resolver.js';
import { parseKvEvents } from '../../core/wire/parse-kv-events.js';
import { createExporter, type Exporter, type ReloadStatus } from '../../outputs/exporter.js';
import { renderLandingSections, type LandingInfo } from '../../outputs/landing-page.js';
import { LiveFeed } from '../../outputs/live-feed.js';
import { renderLiveReportBody, renderLiveReportPage } from '../../outputs/report/live-report-page.js';
import { WebServer } from '../../outputs/web-server.js';
import type { Clock, Logger, ObservationSink, RunningSource } from '../../sources/ports.js';
import { InflightTracker } from '../../sources/relay/inflight-tracker.js';
import { REQUEST_UNREADABLE_REASONS } from '../../core/relay/request-unreadable.js';
import { WorkerRelay, type ParseEvents, type RelayCounters } from '../../sources/relay/worker-relay.js';
import { SourceStatusBoard } from '../../sources/source-status.js';
import { createExclusiveEventsSource } from '../../sources/watch/exclusive-events-source.js';
import { createOrchestratorLogSource, createRequestLogSource } from '../../sources/watch/log-sources.js';
import { createPrometheusScrapeSource } from '../../sources/watch/prometheus-scrape-source.js';
import { createRouterDebugSource } from '../../sources/watch/router-debug-source.js';
import { createServerInfoSource } from '../../sources/watch/server-info-source.js';
import type { RenderResult } from '../../sources/relay/router-side-ids.js';
import { ModelTokenizer } from '../../sources/tokenizer/model-tokenizer.js';
import { RenderPool } from '../../sources/tokenizer/render-pool.js';
import type { StreamRankCounters } from '../../sources/zmq/stream-counters.js';
import { ZmqEventsSource } from '../../sources/zmq/zmq-events-source.js';
import { VERSION } from '../version.js';
import { relayHost, type ServeConfig } from './config.js';
import { startTimelineSampler, type TimelineSampler } from './timeline-sampler.js';

/** What the daemon needs from the state (createSentinelState satisfies it). */
export interface StatePort {
  apply(observation: Observation): void;
  snapshot(now: number): SentinelStateSnapshot;
  /** the joined decisions and outcomes: the live feed shows them */
  subscribe(listener: JoinedEventListener): () => void;
  /** what the rules read (the report's inferred configuration); optional */
  diagnosisInput?(now: number): DiagnosisInput;
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

interface SourceSpec {
  readonly key: string;
  readonly make: () => RunningSource;
}

export function defaultState(config: ServeConfig): SentinelState {
  return createSentinelState({
    mode: config.ctx.some((c) => c.events === 'exclusive') ? 'exclusive' : 'auto',
    windowMs: 10 * 60_000,
    // a daemon should not flap: a finding needs two evaluations to turn on, five to turn off
    hysteresis: { onAfter: 2, offAfter: 5 },
    evaluateEveryMs: 1_000,
    limits: { tableBlocksPerServer: config.state.maxTableBlocks },
  });
}

function addCounters(a: RelayCounters | undefined, b: RelayCounters): RelayCounters {
  if (a === undefined) return b;
  return {
    server: b.server,
    abandonedPolls: a.abandonedPolls + b.abandonedPolls,
    capturesTruncated: a.capturesTruncated + b.capturesTruncated,
    eventsEvicted: a.eventsEvicted + b.eventsEvicted,
    consumersExpired: a.consumersExpired + b.consumersExpired,
    consumersEvicted: a.consumersEvicted + b.consumersEvicted,
    resumePositionsDiscarded: a.resumePositionsDiscarded + b.resumePositionsDiscarded,
    upstreamRetries: a.upstreamRetries + b.upstreamRetries,
    eventsRedelivered: a.eventsRedelivered + b.eventsRedelivered,
  };
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
  const render = initial.tokenizer !== null ? new RenderPool({ tokenizer: ModelTokenizer.load(initial.tokenizer), thread: true }) : undefined;
  const status = new SourceStatusBoard({ sink, clock, logger });
  const snapshot = (): SentinelStateSnapshot => state.snapshot(clock());
  let sampler: TimelineSampler | null = null;
  let reloadStatus: ReloadStatus = { successful: true, lastSuccessAt: clock() };
  const running = new Map<string, RunningSource>();
  /** counters of relays a reload replaced, per server id, so the exported counters never go back */
  const retired = new Map<string, RelayCounters>();
  const relayCounters = (): RelayCounters[] => {
    const total = new Map(retired);
    for (const s of running.values()) if (s instanceof WorkerRelay) total.set(s.target.id, addCounters(total.get(s.target.id), s.counters()));
    return [...total.values()];
  };
  const streamCounters = (): StreamRankCounters[] => [...running.values()].flatMap((s) => (s instanceof ZmqEventsSource ? s.counters() : []));
  const exporter = createExporter({
    relays: relayCounters,
    streams: streamCounters,
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
    const audit = buildAuditReport(state.snapshot(now), {
      kind: 'live',
      description: deps.reportDescription?.() ?? `kvsentinel serve: ${status.list().map((s) => s.source).join(', ') || 'no sources'}, since ${new Date(startedAt).toISOString()}`,
      observations,
      malformed: status.list().reduce((n, s) => n + Object.values(s.badInput).reduce((a, b) => a + b, 0), 0),
    });
    const timeline = sampler?.timeline;
    return buildReportModel({ version: VERSION, generatedAt: now, audit, samples: timeline?.samples ?? [], sampleIntervalMs: timeline?.intervalMs ?? null, input: state.diagnosisInput?.(now) ?? null });
  };
  feed = new LiveFeed({ snapshot, clock, logger, version: VERSION, report: () => renderLiveReportBody(reportModel(), renderLandingSections(landingInfo())) });
  const inflight = new InflightTracker();
  const tokensPerBlock = new Map<string, number>();
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
      relays: [...running.values()].filter((r): r is WorkerRelay => r instanceof WorkerRelay).map((r) => {
        const a = r.address();
        const consumers = r.bufferStats().consumers.map((c) => ({ consumer: c.consumer, backlog: c.backlog, delivered: c.delivered, dropped: c.dropped }));
        return { id: r.target.id, listen: `${a.host}:${a.port}`, upstream: r.target.upstream, consumers };
      }),
    };
  }

  const web = new WebServer({
    exporter,
    feed,
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
      for (const s of running.values()) if (s instanceof WorkerRelay && s.target.id === r.id) for (const a of s.addresses()) aliases[r.id]!.push(`:${a.port}`);
    }
    for (const x of c.ctx) aliases[x.id] = [x.url];
    return createServerResolver(aliases);
  }

  function specsFor(c: ServeConfig): SourceSpec[] {
    const common = { timeoutMs: c.timeoutMs, maxBytes: c.maxResponseBytes };
    const specs: SourceSpec[] = [];
    const resolve: ServerResolver = (name) => resolver(name);
    for (const r of c.relays) {
      const target = { id: r.id, upstream: r.upstream, host: relayHost(r), port: r.port, replicaPorts: r.replicaPorts };
      const options = {
        drainIntervalMs: c.relay.drainIntervalMs,
        drainTimeoutMs: c.relay.drainTimeoutMs,
        maxDrainBytes: c.relay.maxDrainBytes,
        consumerHeader: c.relay.consumerHeader,
        captureMaxBytes: c.relay.captureMaxBytes,
        maxRequestBytes: c.relay.maxRequestBytes,
        proxyTimeoutMs: c.relay.proxyTimeoutMs,
        upstreamKeepAliveMs: c.relay.upstreamKeepAliveMs,
        shutdownGraceMs: c.relay.shutdownGraceMs,
        // vLLM and SGLang serve no /kv_cache_events: their stream is the event path, the relay only proxies
        drainEvents: !c.zmq.some((z) => z.id === r.id && z.engine !== 'trtllm'),
        buffer: { maxEvents: c.relay.bufferMaxEvents, maxBytes: c.relay.bufferMaxBytes, consumerIdleMs: c.relay.consumerIdleMs, retainReadMs: c.relay.retainReadMs, maxConsumers: c.relay.maxConsumers },
      };
      specs.push({
        key: `relay ${JSON.stringify([target, options])}`,
        make: () => {
          // the series exists (at 0) from the start, so rate() and the dashboards see the relay before any refusal
          exporter.countRelayRejected(target.id, 'body_too_large', 0);
          for (const reason of REQUEST_UNREADABLE_REASONS) exporter.countRelayUnreadable(target.id, reason, 0);
          // 0 without a tokenizer: the dashboards' render series exists for every relay
          exporter.countRender(target.id, 'rendered', null, 0);
          return new WorkerRelay(
            target,
            {
              sink,
              status,
              clock,
              logger,
              inflight,
              parseEvents,
              onProxied: (s, sec) => exporter.observeRelayDuration(s, sec),
              onRejected: (s, reason) => exporter.countRelayRejected(s, reason),
              onUnreadable: (s, reason) => exporter.countRelayUnreadable(s, reason),
              ...(render !== undefined ? { render, onRender: (s: string, result: RenderResult, reason: string | null) => exporter.countRender(s, result, reason) } : {}),
            },
            options,
          );
        },
      });
    }
    for (const z of c.zmq) specs.push({ key: `zmq ${JSON.stringify(z)}`, make: () => new ZmqEventsSource(z, { sink, status, clock, logger }) });
    // only TensorRT-LLM serves /server_info
    const trtllmOnly = (id: string): boolean => !c.zmq.some((z) => z.id === id && z.engine !== 'trtllm');
    const workers = [...c.relays.map((r) => ({ id: r.id, url: r.upstream })), ...c.ctx.map((x) => ({ id: x.id, url: x.url }))].filter((w) => trtllmOnly(w.id));
    for (const w of workers) {
      specs.push({
        key: `server-info ${JSON.stringify([w, c.serverInfoIntervalMs, common])}`,
        make: () =>
          createServerInfoSource(
            { sink, status, clock, onInfo: (server, tpb) => (tpb !== null ? tokensPerBlock.set(server, tpb) : tokensPerBlock.delete(server)) },
            { server: w.id, url: w.url, intervalMs: c.serverInfoIntervalMs, ...common },
          ),
      });
    }
    for (const x of c.ctx) {
      if (x.prometheus) {
        specs.push({ key: `prometheus ${JSON.stringify([x, c.pollIntervalMs, common])}`, make: () => createPrometheusScrapeSource({ status }, { server: x.id, url: x.url, intervalMs: c.pollIntervalMs, ...common }) });
      }
      if (x.events === 'exclusive') {
        specs.push({
          key: `events ${JSON.stringify([x, c.relay.drainIntervalMs, common])}`,
          make: () => createExclusiveEventsSource({ sink, status, clock, logger, parseEvents }, { server: x.id, url: x.url, intervalMs: c.relay.drainIntervalMs, timeoutMs: c.timeoutMs, maxBytes: c.relay.maxDrainBytes }),
        });
      }
    }
    if (c.routerDebug !== null) {
      const rd = c.routerDebug;
      specs.push({ key: `router-debug ${JSON.stringify([rd, common])}`, make: () => createRouterDebugSource({ sink, status, clock, resolve }, { url: rd.url, intervalMs: rd.intervalMs, ...common }) });
    }
    if (c.orchestratorLog !== null) {
      const path = c.orchestratorLog;
      specs.push({ key: `orchestrator-log ${JSON.stringify([path, c.followIntervalMs])}`, make: () => createOrchestratorLogSource({ sink, status, clock, logger, resolve }, { path, intervalMs: c.followIntervalMs }) });
    }
    c.requestLogs.forEach((r, index) => {
      specs.push({
        key: `requests ${JSON.stringify([r, index, c.followIntervalMs])}`,
        make: () =>
          createRequestLogSource(
            { sink, status, clock, logger, resolve, tokensPerBlock: (s) => tokensPerBlock.get(s) ?? null },
            { path: r.path, format: r.format, intervalMs: c.followIntervalMs, index },
          ),
      });
    });
    return specs;
  }

  async function reconcile(c: ServeConfig): Promise<void> {
    const wanted = new Map(specsFor(c).map((s) => [s.key, s]));
    const removed = [...running].filter(([key]) => !wanted.has(key));
    // stop first: a changed relay frees its port before its replacement binds it
    await Promise.all(
      removed.map(async ([key, source]) => {
        running.delete(key);
        status.silence(source.name);
        await source.stop();
        if (source instanceof WorkerRelay) retired.set(source.target.id, addCounters(retired.get(source.target.id), source.counters()));
        status.unregister(source.name);
        if (source instanceof ZmqEventsSource) for (const name of source.sourceNames) status.unregister(name);
      }),
    );
    const failures: string[] = [];
    for (const [key, spec] of wanted) {
      if (running.has(key)) continue;
      const source = spec.make();
      if (source instanceof ZmqEventsSource) for (const name of source.sourceNames) status.register(name);
      else status.register(source.name);
      try {
        await source.start();
        running.set(key, source);
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
      routerType: null,
      tokensPerBlock: facts.tokensPerBlock,
      maxBatchSize: facts.maxBatchSize,
      backfillBlockHashesOnFinish: facts.backfillBlockHashesOnFinish,
      servers: [...new Set([...c.relays.map((r) => r.id), ...c.ctx.map((x) => x.id), ...c.zmq.map((z) => z.id)])],
      profile: facts.profile,
      trackRoutedBlocks: facts.trackRoutedBlocks,
      loadWeight: facts.loadWeight,
    });
    if (failures.length > 0) throw new Error(failures.join('; '));
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
      const serveWeb = deps.web !== false;
      if (serveWeb) {
        await web.listen(config.listen.host, config.listen.port);
        feed?.start();
        sampler = startTimelineSampler(snapshot, clock);
      }
      await reconcile(config);
      ready = true;
      if (serveWeb) {
        const a = web.address();
        const relays = [...running.values()].filter((r): r is WorkerRelay => r instanceof WorkerRelay).map((r) => `${r.target.id}=${r.addresses().map((x) => `${x.host}:${x.port}`).join(',')}`);
        logger.info('kvsentinel serving', { listen: `${a.host}:${a.port}`, sources: running.size, ...(relays.length > 0 ? { relays: relays.join(' ') } : {}) });
      }
    },
    async reload() {
      let next: ServeConfig;
      try {
        next = deps.loadConfig !== undefined ? await deps.loadConfig() : config;
        if (next.listen.host !== config.listen.host || next.listen.port !== config.listen.port) {
          throw new Error(`web.listen_address cannot change on reload (${config.listen.host}:${config.listen.port} -> ${next.listen.host}:${next.listen.port}); restart instead`);
        }
        if (next.tokenizer !== config.tokenizer) throw new Error(`tokenizer.path cannot change on reload (${config.tokenizer ?? 'none'} -> ${next.tokenizer ?? 'none'}); restart instead`);
      } catch (err) {
        reloadStatus = { ...reloadStatus, successful: false };
        logger.error('reload failed; keeping the current configuration', { error: err instanceof Error ? err.message : String(err) });
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
          logger.info(`letting ${inFlight} in-flight relay requests finish (up to relay.shutdown_grace ${graceS}s); signal again to stop now`, { in_flight: inFlight });
        }
        // relays first: they finish in-flight requests; pollers stop in parallel
        await Promise.all([...running.values()].map((s) => s.stop()));
        running.clear();
        sampler?.stop();
        await feed?.stop();
        await render?.close();
        if (started && deps.web !== false) await web.close();
        logger.info('kvsentinel stopped');
      })();
      return stopping;
    },
    inFlightRelayRequests() {
      let n = 0;
      for (const s of running.values()) if (s instanceof WorkerRelay) n += s.inFlight;
      return n;
    },
    hurry() {
      for (const s of running.values()) if (s instanceof WorkerRelay) s.hurry();
    },
    webAddress: () => web.address(),
    relayAddress(id) {
      for (const s of running.values()) if (s instanceof WorkerRelay && s.target.id === id) return s.address();
      return null;
    },
    relayAddresses(id) {
      for (const s of running.values()) if (s instanceof WorkerRelay && s.target.id === id) return s.addresses();
      return [];
    },
  };
  return daemon;
}
