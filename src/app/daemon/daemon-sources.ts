// The sources a configuration asks for, as specs the daemon reconciles by key: an unchanged spec keeps its running
// source, a changed or removed one stops. Each made source says what kind it is, so the daemon reads a relay's
// listeners and counters or a stream's per-rank counters through the interface of its kind.
import type { ForwardCounters, RelayCounters, StreamRankCounters } from '../../core/observe/sidecar-stats.js';
import type { EventBufferStats } from '../../core/relay/event-buffer.js';
import type { ReadRetentionPool } from '../../core/relay/read-retention.js';
import type { ServerResolver } from '../../core/watch/server-resolver.js';
import type { Exporter } from '../../outputs/exporter.js';
import type { Clock, Logger, ObservationSink, RunningSource, SourceReporter } from '../../sources/ports.js';
import type { InflightTracker } from '../../sources/relay/inflight-tracker.js';
import { DecisionGate } from '../../sources/relay/decision-gate.js';
import type { RenderResult } from '../../sources/relay/router-side-ids.js';
import { WorkerRelay, type ParseEvents } from '../../sources/relay/worker-relay.js';
import type { RenderPool } from '../../sources/tokenizer/render-pool.js';
import { createExclusiveEventsSource } from '../../sources/watch/exclusive-events-source.js';
import { createOrchestratorLogSource, createRequestLogSource } from '../../sources/watch/log-sources.js';
import { createPrometheusScrapeSource } from '../../sources/watch/prometheus-scrape-source.js';
import { createRouterDebugSource } from '../../sources/watch/router-debug-source.js';
import { createServerInfoSource } from '../../sources/watch/server-info-source.js';
import { ZmqBindSource } from '../../sources/zmq/zmq-bind-source.js';
import { ZmqEventsSource } from '../../sources/zmq/zmq-events-source.js';
import { relayHost, type ServeConfig } from '../config/serve-config.js';

export interface HostPort {
  readonly host: string;
  readonly port: number;
}

/** What the daemon reads from a relay: it answers the router's requests, so stopping waits for them. */
export interface RelayEndpoint extends RunningSource {
  readonly target: { readonly id: string; readonly upstream: string };
  readonly inFlight: number;
  /** cut in-flight requests off instead of waiting for them */
  hurry(): void;
  address(): HostPort;
  /** one listener per consumer port */
  addresses(): HostPort[];
  counters(): RelayCounters;
  bufferStats(): EventBufferStats;
}

/** What the daemon reads from a KV-event stream: it reports health under one name per rank. */
export interface StreamEndpoint extends RunningSource {
  readonly sourceNames: readonly string[];
  counters(): StreamRankCounters[];
  /** a bound socket's forward= consumer: what it passed on */
  forwardCounters?(): ForwardCounters[];
}

export type DaemonSource =
  | { readonly kind: 'relay'; readonly source: RelayEndpoint }
  | { readonly kind: 'stream'; readonly source: StreamEndpoint }
  | { readonly kind: 'poller'; readonly source: RunningSource };

/** The names a source reports under on the status board. */
export function statusNamesOf(made: DaemonSource): readonly string[] {
  return made.kind === 'stream' ? made.source.sourceNames : [made.source.name];
}

export interface SourceSpec {
  readonly key: string;
  readonly make: () => DaemonSource;
}

/** What every source shares: where observations go, the status board, the exporter's event-counted families. */
export interface SourceContext {
  readonly sink: ObservationSink;
  readonly status: SourceReporter;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly parseEvents: ParseEvents;
  readonly exporter: Exporter;
  readonly inflight: InflightTracker;
  readonly render: RenderPool | undefined;
  /** names in logs and router answers → server ids (rebuilt when the relays' ports are known) */
  readonly resolve: ServerResolver;
  /**
   * one DecisionGate per server for the daemon's life: its relay's decisions and every source of its events (the
   * relay's drains, its ZMQ stream) pass the same gate, so no event overtakes the decision taken without it
   */
  readonly gates: Map<string, DecisionGate>;
  /** the read history every relay keeps for late-joining replicas, one budget for the daemon's life */
  readonly readRetention: ReadRetentionPool;
}

/** The server's decision gate (made on first use, kept across reloads). */
export function decisionGateOf(x: SourceContext, server: string): DecisionGate {
  let gate = x.gates.get(server);
  if (gate === undefined) {
    gate = new DecisionGate(x.sink);
    x.gates.set(server, gate);
  }
  return gate;
}

function relaySpecs(c: ServeConfig, x: SourceContext): SourceSpec[] {
  // the shared budget is resized in place: a new total must not restart every relay (and empty its buffer)
  const { retainReadBytes: _shared, ...relay } = c.relay;
  return c.relays.map((r) => {
    const target = { id: r.id, upstream: r.upstream, host: relayHost(r), port: r.port, replicaPorts: r.replicaPorts };
    const options = {
      ...relay,
      // vLLM and SGLang serve no /kv_cache_events: their stream is the event path, the relay only proxies
      drainEvents: !c.zmq.some((z) => z.id === r.id && z.engine !== 'trtllm'),
    };
    return {
      key: `relay ${JSON.stringify([target, options])}`,
      make: () => {
        const { exporter, render } = x;
        // the series exists (at 0) from the start, so rate() and the dashboards see the relay before any refusal
        // (its unreadable requests are the state's, counted from its decisions)
        exporter.countRelayRejected(target.id, 'body_too_large', 0);
        // 0 without a tokenizer: the dashboards' render series exists for every relay
        exporter.countRender(target.id, 'rendered', null, 0);
        const relay = new WorkerRelay(
          target,
          {
            sink: x.sink,
            gate: decisionGateOf(x, target.id),
            status: x.status,
            clock: x.clock,
            logger: x.logger,
            inflight: x.inflight,
            parseEvents: x.parseEvents,
            readRetention: x.readRetention,
            onProxied: (s, sec) => exporter.observeRelayDuration(s, sec),
            onRejected: (s, reason) => exporter.countRelayRejected(s, reason),
            ...(render !== undefined
              ? {
                  render,
                  onRender: (s: string, result: RenderResult, reason: string | null) =>
                    exporter.countRender(s, result, reason),
                }
              : {}),
          },
          options,
        );
        return { kind: 'relay', source: relay };
      },
    };
  });
}

function watchSpecs(c: ServeConfig, x: SourceContext): SourceSpec[] {
  const common = { timeoutMs: c.timeoutMs, maxBytes: c.maxResponseBytes };
  const { sink, status, clock, logger, resolve } = x;
  const poller = (source: RunningSource): DaemonSource => ({ kind: 'poller', source });
  const specs: SourceSpec[] = [];
  // only TensorRT-LLM serves /server_info
  const trtllmOnly = (id: string): boolean => !c.zmq.some((z) => z.id === id && z.engine !== 'trtllm');
  const workers = [
    ...c.relays.map((r) => ({ id: r.id, url: r.upstream })),
    ...c.ctx.map((w) => ({ id: w.id, url: w.url })),
  ].filter((w) => trtllmOnly(w.id));
  for (const w of workers) {
    specs.push({
      key: `server-info ${JSON.stringify([w, c.serverInfoIntervalMs, c.pollIntervalMs, common])}`,
      make: () =>
        poller(
          createServerInfoSource(
            { sink, status, clock },
            { server: w.id, url: w.url, intervalMs: c.serverInfoIntervalMs, retryMs: c.pollIntervalMs, ...common },
          ),
        ),
    });
  }
  for (const w of c.ctx) {
    if (w.prometheus) {
      specs.push({
        key: `prometheus ${JSON.stringify([w, c.pollIntervalMs, common])}`,
        make: () =>
          poller(
            createPrometheusScrapeSource(
              { status },
              { server: w.id, url: w.url, intervalMs: c.pollIntervalMs, ...common },
            ),
          ),
      });
    }
    if (w.events === 'exclusive') {
      specs.push({
        key: `events ${JSON.stringify([w, c.relay.drainIntervalMs, common])}`,
        make: () =>
          poller(
            createExclusiveEventsSource(
              { sink, status, clock, logger, parseEvents: x.parseEvents },
              {
                server: w.id,
                url: w.url,
                intervalMs: c.relay.drainIntervalMs,
                timeoutMs: c.timeoutMs,
                maxBytes: c.relay.maxDrainBytes,
              },
            ),
          ),
      });
    }
  }
  if (c.routerDebug !== null) {
    const rd = c.routerDebug;
    specs.push({
      key: `router-debug ${JSON.stringify([rd, common])}`,
      make: () =>
        poller(
          createRouterDebugSource(
            { sink, status, clock, resolve },
            { url: rd.url, intervalMs: rd.intervalMs, ...common },
          ),
        ),
    });
  }
  if (c.orchestratorLog !== null) {
    const path = c.orchestratorLog;
    specs.push({
      key: `orchestrator-log ${JSON.stringify([path, c.followIntervalMs])}`,
      make: () =>
        poller(
          createOrchestratorLogSource(
            { sink, status, clock, logger, resolve },
            { path, intervalMs: c.followIntervalMs },
          ),
        ),
    });
  }
  c.requestLogs.forEach((r, index) => {
    specs.push({
      key: `requests ${JSON.stringify([r, index, c.followIntervalMs])}`,
      make: () =>
        poller(
          createRequestLogSource(
            { sink, status, clock, logger, resolve },
            { path: r.path, format: r.format, intervalMs: c.followIntervalMs, index },
          ),
        ),
    });
  });
  return specs;
}

/** Every source the configuration asks for. */
export function sourceSpecsFor(c: ServeConfig, x: SourceContext): SourceSpec[] {
  const streams: SourceSpec[] = c.zmq.map((z) => ({
    key: `zmq ${JSON.stringify(z)}`,
    make: () => ({
      kind: 'stream',
      // the stream's events wait behind the server's open decisions, like the relay's drains (DecisionGate)
      source: new ZmqEventsSource(z, {
        sink: decisionGateOf(x, z.id),
        status: x.status,
        clock: x.clock,
        logger: x.logger,
      }),
    }),
  }));
  const bound: SourceSpec[] = c.zmqBind.map((z) => ({
    key: `zmq-bind ${JSON.stringify(z)}`,
    make: () => ({
      kind: 'stream',
      source: new ZmqBindSource(z, { sink: x.sink, status: x.status, clock: x.clock, logger: x.logger }),
    }),
  }));
  // the order of today's daemon: relays, streams, then the watch sources
  return [...relaySpecs(c, x), ...streams, ...bound, ...watchSpecs(c, x)];
}
