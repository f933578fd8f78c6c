// One relay port for one CTX worker (docs/design.md §3, relay mode). Every path is a streaming reverse proxy to the
// worker, except POST /kv_cache_events, which is answered from the relay's own event buffer: the relay is the sole
// consumer of the worker's destructive queue and gives each consumer every event exactly once, in the worker's exact
// JSON. This file is the HTTP around two socket-free parts: relay-event-path.ts (the event path) and
// ctx-exchange-recorder.ts (completion requests become decision and outcome observations).
//
// Decisions:
// - Drains run on an interval, whenever a consumer polls (see RelayEventPath), and when a CTX response completed.
// - Each listen port is one consumer (one orchestrator replica): the real router's poll carries no identity, and
//   neither its remote port (aiohttp reconnects from new ports) nor its address (replicas can share one) can name
//   it without delivering events twice or merging replicas. A request header (default X-Kvsentinel-Consumer), when
//   sent, names the consumer instead.
// - Request and response bodies stream through; each chunk is handed to the upstream (or the client) before the
//   recorder looks at it.
// - A request body over maxRequestBytes is refused with 413 (JSON error, connection closed) and counted: at once when
//   Content-Length declares it, else when the streamed body crosses the limit (the upstream request is aborted).
import { KvsentinelError } from '../../core/errors.js';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import { Client, Pool } from 'undici';
import type { RequestUnreadableReason } from '../../core/relay/request-unreadable.js';
import type { EventBufferStats } from '../../core/relay/event-buffer.js';
import type { ReadRetentionShare } from '../../core/relay/read-retention.js';
import { fetchBytes, reasonOf } from '../http/fetch-text.js';
import type { RunningSource } from '../ports.js';
import { CtxScanPool } from './ctx-scan-pool.js';
import { BodyReplay, isConnectionLost } from './body-replay.js';
import { CtxExchangeRecorder } from './ctx-exchange-recorder.js';
import { upstreamRequestHeaders } from './http-headers.js';
import { DecisionGate } from './decision-gate.js';
import { RelayEventPath } from './relay-event-path.js';
import { RequestBodyFeed } from './request-body-feed.js';
import { ScanFallbacks } from './scan-fallbacks.js';
import { DEFAULT_RELAY_OPTIONS, type RelayDeps, type RelayOptions, type RelayTarget } from './relay-options.js';
import type { RelayCounters } from '../../core/observe/sidecar-stats.js';
import { UpstreamExchange } from './upstream-exchange.js';

export type { ParseEvents } from './relay-event-path.js';
export { type RelayDeps, type RelayOptions, type RelayRejectReason, type RelayTarget } from './relay-options.js';

function pathOf(url: string | undefined): string {
  const u = url ?? '/';
  const q = u.indexOf('?');
  return q === -1 ? u : u.slice(0, q);
}

/** Content-Length as a number; null when absent or not a plain decimal (then the streamed count decides). */
function declaredLength(value: string | undefined): number | null {
  return value !== undefined && /^\d{1,15}$/.test(value) ? Number(value) : null;
}

export class WorkerRelay implements RunningSource {
  readonly name: string;
  readonly target: RelayTarget;
  readonly #options: RelayOptions;
  readonly #deps: RelayDeps;
  readonly #events: RelayEventPath;
  readonly #readShare: ReadRetentionShare | null;
  readonly #pool: Pool;
  readonly #scans: CtxScanPool;
  readonly #recorder: CtxExchangeRecorder;
  /** one listener per consumer port: [target.port, ...replicaPorts] */
  readonly #servers: Server[];
  readonly #active = new Set<Promise<void>>();
  readonly #stopSignal = new AbortController();
  #timer: NodeJS.Timeout | undefined;
  #upstreamRetries = 0;
  #rejectedTooLarge = 0;
  #started = false;
  #stopped: Promise<void> | undefined;
  #endGrace: (() => void) | undefined;
  #hurried = false;

  constructor(target: RelayTarget, deps: RelayDeps, options: Partial<RelayOptions> = {}) {
    this.target = target;
    this.name = `relay:${target.id}`;
    this.#options = { ...DEFAULT_RELAY_OPTIONS, ...options };
    this.#deps = deps;
    this.#pool = new Pool(target.upstream, {
      headersTimeout: this.#options.proxyTimeoutMs,
      bodyTimeout: this.#options.proxyTimeoutMs,
      // never longer than the setting, whatever a Keep-Alive response header suggests
      keepAliveTimeout: this.#options.upstreamKeepAliveMs,
      keepAliveMaxTimeout: this.#options.upstreamKeepAliveMs,
    });
    const url = `${target.upstream.replace(/\/+$/, '')}/kv_cache_events`;
    const drain = async (): Promise<Uint8Array> => {
      const fetched = await fetchBytes(url, {
        method: 'POST',
        timeoutMs: this.#options.drainTimeoutMs,
        maxBytes: this.#options.maxDrainBytes,
        dispatcher: this.#pool,
        signal: this.#stopSignal.signal,
      });
      return fetched.bytes;
    };
    const { status, clock, logger, parseEvents } = deps;
    // drained and delivered events wait behind decisions still being read (DecisionGate)
    const gate = deps.gate ?? new DecisionGate(deps.sink);
    this.#readShare = deps.readRetention?.join() ?? null;
    this.#events = new RelayEventPath(
      { server: target.id, source: this.name, upstream: url, drain, sink: gate, status, clock, logger, parseEvents },
      this.#options.buffer,
      this.#readShare,
    );
    this.#scans = new CtxScanPool({
      thread: this.#options.scanThread,
      fallbacks: new ScanFallbacks(logger, this.name),
    });
    this.#recorder = new CtxExchangeRecorder({
      server: target.id,
      source: this.name,
      gate,
      sink: deps.sink,
      clock,
      logger,
      inflight: deps.inflight,
      scans: this.#scans,
      captureMaxBytes: this.#options.captureMaxBytes,
      ...(deps.render !== undefined ? { render: deps.render } : {}),
      ...(deps.onUnreadable !== undefined ? { onUnreadable: deps.onUnreadable } : {}),
      ...(deps.onRender !== undefined ? { onRender: deps.onRender } : {}),
    });
    this.#servers = [target.port, ...(target.replicaPorts ?? [])].map((_, i) =>
      createServer({ keepAliveTimeout: 65_000 }, (req, res) => this.#track(this.#handle(req, res, i))),
    );
    deps.inflight.register(target.id);
  }

  /** The first bound address (after start). */
  address(): { host: string; port: number } {
    return this.addresses()[0]!;
  }

  /** Every bound address, one per consumer port, in configured order (after start). */
  addresses(): { host: string; port: number }[] {
    return this.#servers.map((server) => {
      const a = server.address() as AddressInfo | null;
      if (a === null) throw new KvsentinelError('internal', `${this.name} is not listening`);
      return { host: a.address, port: a.port };
    });
  }

  /** event polls whose consumer hung up before the answer (their events stay for the consumer's next poll) */
  get abandonedPolls(): number {
    return this.#events.abandonedPolls;
  }

  /** requests refused with 413 because their body was over maxRequestBytes */
  get rejectedTooLarge(): number {
    return this.#rejectedTooLarge;
  }

  /** CTX requests whose prompt or ids could not be read, by reason (cumulative) */
  unreadableRequests(): ReadonlyMap<RequestUnreadableReason, number> {
    return this.#recorder.unreadableRequests();
  }

  bufferStats(): EventBufferStats {
    return this.#events.bufferStats();
  }

  counters(): RelayCounters {
    const b = this.#events.bufferStats();
    return {
      server: this.target.id,
      abandonedPolls: this.#events.abandonedPolls,
      capturesTruncated: this.#recorder.capturesTruncated,
      eventsEvicted: b.evicted,
      consumersExpired: b.expiredConsumers,
      consumersEvicted: b.evictedConsumers,
      resumePositionsDiscarded: b.forgottenDiscarded,
      readHistoryReleased: b.releasedForBudget,
      upstreamRetries: this.#upstreamRetries,
      eventsRedelivered: this.#events.redelivered,
      scanFallbacks: this.#scans.fallbacks.counts(),
    };
  }

  async start(): Promise<void> {
    if (this.#started) return;
    this.#started = true;
    const ports = [this.target.port, ...(this.target.replicaPorts ?? [])];
    await Promise.all(
      this.#servers.map(async (server, i) => {
        server.listen(ports[i], this.target.host);
        await once(server, 'listening');
      }),
    );
    if (!this.#options.drainEvents) return;
    this.#timer = setInterval(() => void this.#events.tick(), this.#options.drainIntervalMs);
    this.#timer.unref();
    void this.#events.tick();
  }

  /** Stops accepting, lets in-flight proxied requests finish (up to the grace period), stops draining. Idempotent. */
  stop(): Promise<void> {
    this.#stopped ??= this.#doStop();
    return this.#stopped;
  }

  /** Proxied requests and polls being answered right now. */
  get inFlight(): number {
    return this.#active.size;
  }

  /** During stop(): stop waiting for in-flight requests (a second SIGTERM); they are cut off. */
  hurry(): void {
    this.#hurried = true;
    this.#endGrace?.();
  }

  /** Drains the worker now (tests and shutdown hooks). */
  drainNow(): Promise<void> {
    return this.#events.drainNow();
  }

  async #doStop(): Promise<void> {
    clearInterval(this.#timer);
    const closed = this.#started
      ? Promise.all(this.#servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))))
      : Promise.resolve();
    for (const server of this.#servers) server.closeIdleConnections();
    const grace = new Promise<void>((resolve) => {
      this.#endGrace = resolve;
      if (this.#hurried) resolve();
      setTimeout(resolve, this.#options.shutdownGraceMs).unref();
    });
    await Promise.race([Promise.allSettled([...this.#active]), grace]);
    this.#stopSignal.abort();
    for (const server of this.#servers) server.closeAllConnections();
    await closed;
    await this.#events.idle();
    this.#readShare?.leave();
    await this.#pool.close().catch(() => undefined);
    await this.#scans.close();
    this.#deps.inflight.unregister(this.target.id);
  }

  #track(work: Promise<void>): void {
    const p = work.catch((err: unknown) =>
      this.#deps.logger.error(`${this.name}: request handler failed`, { error: String(err) }),
    );
    this.#active.add(p);
    void p.finally(() => this.#active.delete(p));
  }

  async #handle(req: IncomingMessage, res: ServerResponse, portIndex: number): Promise<void> {
    if (req.method === 'POST' && pathOf(req.url) === '/kv_cache_events') return this.#serveEvents(req, res, portIndex);
    return this.#proxy(req, res);
  }

  /** the header's name when sent, else the listen port's: `port:9401` */
  #consumerOf(req: IncomingMessage, portIndex: number): string {
    const h = this.#options.consumerHeader !== '' ? req.headers[this.#options.consumerHeader] : undefined;
    const named = Array.isArray(h) ? h[0] : h;
    if (named !== undefined && named !== '') return named;
    const a = this.#servers[portIndex]?.address() as AddressInfo | null | undefined;
    return `port:${a?.port ?? portIndex}`;
  }

  async #serveEvents(req: IncomingMessage, res: ServerResponse, portIndex: number): Promise<void> {
    req.resume(); // the body is empty by contract; discard whatever came
    let hungUp = false;
    res.once('close', () => {
      if (res.writableFinished) return;
      hungUp = true;
      this.#events.hungUp();
    });
    await this.#events.poll(
      () => this.#consumerOf(req, portIndex),
      () => hungUp || req.socket.destroyed,
      (body) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.byteLength });
        res.end(body);
      },
    );
  }

  #rejectTooLarge(req: IncomingMessage, res: ServerResponse, what: string): void {
    this.#rejectedTooLarge++;
    this.#deps.onRejected?.(this.target.id, 'body_too_large');
    this.#deps.logger.warn(`${this.name}: refused a request body over the limit`, {
      path: pathOf(req.url),
      limitBytes: this.#options.maxRequestBytes,
    });
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const text = JSON.stringify({
      error: {
        message: `kvsentinel relay: request body ${what}, over the relay's limit of ${this.#options.maxRequestBytes} bytes (relay.max_request_bytes)`,
        type: 'request_too_large',
        code: 413,
      },
    });
    // the rest of the body is not read: close the connection after the answer
    res.writeHead(413, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text),
      connection: 'close',
    });
    res.end(text);
    req.resume();
  }

  async #proxy(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const startedAt = performance.now();
    const ts = this.#deps.clock();
    const path = pathOf(req.url);
    const isCtx = req.method === 'POST' && (path === '/v1/completions' || path === '/v1/chat/completions');
    const limit = this.#options.maxRequestBytes;
    const declared = declaredLength(req.headers['content-length']);
    if (declared !== null && declared > limit) {
      // refused before any accounting: the worker never sees it
      this.#rejectTooLarge(req, res, `declares ${declared} bytes`);
      return;
    }
    const replay = new BodyReplay(this.#options.captureMaxBytes);
    // the upstream's first answer byte ends any chance of a retry: the kept body goes
    let exchange = new UpstreamExchange(res, () => replay.release());
    res.on('close', () => {
      if (!res.writableFinished) exchange.cancel(); // the client went away: cancel upstream
    });
    const recorded = isCtx ? this.#recorder.start(req.headers, ts) : undefined;
    // the limit's cut-off: a body crossing it never reaches the recorder or the upstream
    const feed =
      req.method === 'GET' || req.method === 'HEAD'
        ? undefined
        : new RequestBodyFeed(req, limit, replay, recorded, () => {
            exchange.cancel();
            this.#rejectTooLarge(req, res, `sent more than ${limit} bytes`);
          });

    let ok = false;
    try {
      const onChunk = recorded !== undefined ? (chunk: Buffer) => recorded.responseChunk(chunk) : undefined;
      const headers = upstreamRequestHeaders(req.headers);
      const send = (dispatcher: Pool | Client, body: Readable | null) =>
        exchange.run(dispatcher, { method: req.method ?? 'GET', path: req.url ?? '/', headers, body }, onChunk);
      let upstream;
      try {
        upstream = await send(this.#pool, feed?.body ?? null);
      } catch (err) {
        // the connection was lost before any response byte (a worker closing an idle socket as it was reused):
        // once more, on a connection of its own, never a 502 for what the worker never saw answered
        if (exchange.cancelled || exchange.responded || feed?.tooLarge || !replay.replayable || !isConnectionLost(err))
          throw err;
        this.#upstreamRetries++;
        const body = feed?.again() ?? null;
        exchange = new UpstreamExchange(res, () => replay.release());
        const fresh = new Client(this.target.upstream, {
          headersTimeout: this.#options.proxyTimeoutMs,
          bodyTimeout: this.#options.proxyTimeoutMs,
          pipelining: 1,
        });
        try {
          upstream = await send(fresh, body);
        } finally {
          void fresh.close().catch(() => undefined);
        }
      }
      ok = upstream.statusCode >= 200 && upstream.statusCode < 300;
      recorded?.responseEnd(upstream.headers);
      if (upstream.statusCode < 500) this.#deps.status.ok(this.name);
    } catch (err) {
      if (!exchange.cancelled) {
        const message = err instanceof Error ? err.message : String(err);
        this.#deps.status.fail(this.name, reasonOf(err), `${this.target.upstream}: ${message}`);
        if (!res.headersSent) {
          const text = JSON.stringify({
            error: { message: `kvsentinel relay: upstream ${this.target.id} failed: ${message}`, type: 'bad_gateway' },
          });
          res.writeHead(502, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
          res.end(text);
        } else {
          res.destroy();
        }
      }
    } finally {
      if (recorded !== undefined) {
        // the worker stored this request's blocks by the time it answered: drain now, as the router's
        // finish_request polls, so worker truth never waits for the timer (nor for a router that never polls)
        if (ok && this.#options.drainEvents && !this.#stopSignal.signal.aborted) void this.#events.drainNow();
        const latencyMs = performance.now() - startedAt;
        // the decision first (recorded when the scan answered), then the outcome
        await recorded.finish(ok, latencyMs);
        this.#deps.onProxied?.(this.target.id, latencyMs / 1000);
      }
    }
  }
}
