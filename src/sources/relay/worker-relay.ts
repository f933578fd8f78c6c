// One relay port for one CTX worker (docs/design.md §3, relay mode). Every path is a streaming reverse proxy to the
// worker, except POST /kv_cache_events, which is answered from the relay's own event buffer: the relay is the sole
// consumer of the worker's destructive queue and gives each consumer every event exactly once, in the worker's exact
// JSON (relay-event-path.ts holds that logic; this file puts HTTP around it). Completion requests additionally
// become decision and outcome observations.
//
// Decisions:
// - Drains run on an interval, whenever a consumer polls (see RelayEventPath), and when a CTX response completed.
// - Each listen port is one consumer (one orchestrator replica): the real router's poll carries no identity, and
//   neither its remote port (aiohttp reconnects from new ports) nor its address (replicas can share one) can name
//   it without delivering events twice or merging replicas. A request header (default X-Kvsentinel-Consumer), when
//   sent, names the consumer instead.
// - Request and response bodies stream through; the relay keeps a bounded copy (captureMaxBytes) only to read the
//   prompt and the usage. The prompt's token ids are scanned chunk by chunk as the body passes (CtxRequestScanner),
//   on a worker thread (CtxScanPool) so the event loop only forwards; decisions are recorded in the order the
//   request bodies ended, each before its outcome, with the in-flight counts taken when the request arrived.
// - A request body over maxRequestBytes is refused with 413 (JSON error, connection closed) and counted: at once when
//   Content-Length declares it, else when the streamed body crosses the limit (the upstream request is aborted).
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { PassThrough } from 'node:stream';
import { Client, Pool } from 'undici';
import { ctxBodyEncoding, MSGPACK_FLAG_HEADER } from '../../core/relay/ctx-body-encoding.js';
import { createCtxBodyReader } from '../../core/relay/ctx-body-reader.js';
import { parseCtxRequest, unreadableCtxRequest, type CtxRequestInfo } from '../../core/relay/ctx-request.js';
import type { CtxResponseInfo } from '../../core/relay/ctx-response.js';
import type { RequestUnreadableReason } from '../../core/relay/request-unreadable.js';
import type { EventBufferOptions, EventBufferStats } from '../../core/relay/event-buffer.js';
import { fetchText, reasonOf } from '../http/fetch-text.js';
import type { Observation } from '../../core/observe/observation.js';
import type { Clock, Logger, ObservationSink, RunningSource, SourceReporter } from '../ports.js';
import { CtxScanPool } from './ctx-scan-pool.js';
import { BodyCapture } from './body-capture.js';
import { BodyReplay, isConnectionLost } from './body-replay.js';
import { upstreamRequestHeaders } from './http-headers.js';
import type { InflightTracker } from './inflight-tracker.js';
import { DecisionGate } from './decision-gate.js';
import { RelayEventPath, type ParseEvents } from './relay-event-path.js';
import { renderCheckOf, withRouterSideIds, type RenderResult, type RouterSideIds } from './router-side-ids.js';
import type { RenderPool } from '../tokenizer/render-pool.js';
import { UpstreamExchange } from './upstream-exchange.js';

export type { ParseEvents, ParsedEventsLike } from './relay-event-path.js';

export interface RelayTarget {
  /** server id used in observations and metric labels */
  readonly id: string;
  /** the worker's base URL, e.g. http://10.0.0.5:8001 */
  readonly upstream: string;
  readonly host: string;
  /** 0 picks a free port (tests) */
  readonly port: number;
  /** more listen ports on the same host: each is a consumer of its own (one per orchestrator replica) */
  readonly replicaPorts?: readonly number[];
}

export interface RelayOptions {
  readonly drainIntervalMs: number;
  readonly drainTimeoutMs: number;
  readonly maxDrainBytes: number;
  readonly buffer: Partial<EventBufferOptions>;
  /** lower-case header name that names a consumer; empty string disables it (then each listen port is one) */
  readonly consumerHeader: string;
  readonly captureMaxBytes: number;
  /** largest request body forwarded; a larger one is answered 413 */
  readonly maxRequestBytes: number;
  /** upstream response-headers and inter-chunk timeout for proxied requests */
  readonly proxyTimeoutMs: number;
  /**
   * how long an idle upstream connection is kept for reuse: below the worker's own idle timeout (trtllm-serve closes
   * idle keep-alive sockets after 5 s, TIMEOUT_KEEP_ALIVE), so the relay never sends on a socket being closed
   */
  readonly upstreamKeepAliveMs: number;
  /** how long stop() lets in-flight proxied requests finish */
  readonly shutdownGraceMs: number;
  /** read request bodies on a worker thread (false: on the event loop) */
  readonly scanThread: boolean;
  /**
   * drain the worker's /kv_cache_events on the interval; false for engines without that endpoint (vLLM, SGLang:
   * their events come from a ZMQ stream), where the relay only proxies and observes requests
   */
  readonly drainEvents: boolean;
}

/** What a relay dropped or gave up on, cumulative (the exporter's cache and poll counters). */
export interface RelayCounters {
  readonly server: string;
  /** event polls whose consumer hung up before the answer */
  readonly abandonedPolls: number;
  /** request or response copies that hit their bound (prompt or usage not read) */
  readonly capturesTruncated: number;
  /** events evicted from the event buffer by its bounds (read or not) */
  readonly eventsEvicted: number;
  readonly consumersExpired: number;
  readonly consumersEvicted: number;
  readonly resumePositionsDiscarded: number;
  /** requests sent again on a fresh connection after their connection was lost before any response byte */
  readonly upstreamRetries: number;
  /** events delivered to a consumer that had already received them (0 by design; counted, never hidden) */
  readonly eventsRedelivered: number;
}

export const DEFAULT_RELAY_OPTIONS: RelayOptions = {
  drainIntervalMs: 250,
  drainTimeoutMs: 5_000,
  maxDrainBytes: 64 * 1024 * 1024,
  buffer: {},
  consumerHeader: 'x-kvsentinel-consumer',
  captureMaxBytes: 16 * 1024 * 1024,
  maxRequestBytes: 64 * 1024 * 1024,
  proxyTimeoutMs: 600_000,
  upstreamKeepAliveMs: 4_000,
  shutdownGraceMs: 30_000,
  scanThread: true,
  drainEvents: true,
};

export interface RelayDeps {
  readonly sink: ObservationSink;
  readonly status: SourceReporter;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly inflight: InflightTracker;
  readonly parseEvents: ParseEvents;
  /** proxied request durations, to the last byte (the exporter's histogram) */
  readonly onProxied?: (server: string, seconds: number) => void;
  /** a request refused without being forwarded (the exporter's counter) */
  readonly onRejected?: (server: string, reason: RelayRejectReason) => void;
  /** a CTX request whose prompt or ids could not be read (the exporter's counter) */
  readonly onUnreadable?: (server: string, reason: RequestUnreadableReason) => void;
  /** the model's tokenizer: text and chat requests get the router-side ids the router hashes (render parity) */
  readonly render?: RenderPool;
  /** a text or chat request rendered, or not (the exporter's counter) */
  readonly onRender?: (server: string, result: RenderResult, reason: string | null) => void;
}

export type RelayRejectReason = 'body_too_large';

const RESPONSE_TAIL_BYTES = 256 * 1024;

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
  readonly #pool: Pool;
  readonly #scans: CtxScanPool;
  /** the last decision recorded or pending: decisions are recorded one after another, in the order bodies ended */
  #lastDecision: Promise<void> = Promise.resolve();
  readonly #gate: DecisionGate;
  /** one listener per consumer port: [target.port, ...replicaPorts] */
  readonly #servers: Server[];
  readonly #active = new Set<Promise<void>>();
  readonly #stopSignal = new AbortController();
  #timer: NodeJS.Timeout | undefined;
  #requestCounter = 0;
  #capturesTruncated = 0;
  #upstreamRetries = 0;
  #rejectedTooLarge = 0;
  readonly #unreadable = new Map<RequestUnreadableReason, number>();
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
    const drain = async (): Promise<string> => {
      const fetched = await fetchText(url, {
        method: 'POST',
        timeoutMs: this.#options.drainTimeoutMs,
        maxBytes: this.#options.maxDrainBytes,
        dispatcher: this.#pool,
        signal: this.#stopSignal.signal,
      });
      return fetched.text;
    };
    const { status, clock, logger, parseEvents } = deps;
    // drained and delivered events wait behind decisions still being read (DecisionGate)
    this.#gate = new DecisionGate(deps.sink);
    const sink = this.#gate;
    this.#events = new RelayEventPath({ server: target.id, source: this.name, upstream: url, drain, sink, status, clock, logger, parseEvents }, this.#options.buffer);
    this.#scans = new CtxScanPool({ thread: this.#options.scanThread });
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
      if (a === null) throw new Error(`${this.name} is not listening`);
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
    return this.#unreadable;
  }

  bufferStats(): EventBufferStats {
    return this.#events.bufferStats();
  }

  counters(): RelayCounters {
    const b = this.#events.bufferStats();
    return {
      server: this.target.id,
      abandonedPolls: this.#events.abandonedPolls,
      capturesTruncated: this.#capturesTruncated,
      eventsEvicted: b.evicted,
      consumersExpired: b.expiredConsumers,
      consumersEvicted: b.evictedConsumers,
      resumePositionsDiscarded: b.forgottenDiscarded,
      upstreamRetries: this.#upstreamRetries,
      eventsRedelivered: this.#events.redelivered,
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
    const closed = this.#started ? Promise.all(this.#servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve())))) : Promise.resolve();
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
    await this.#pool.close().catch(() => undefined);
    await this.#scans.close();
    this.#deps.inflight.unregister(this.target.id);
  }

  #track(work: Promise<void>): void {
    const p = work.catch((err: unknown) => this.#deps.logger.error(`${this.name}: request handler failed`, { error: String(err) }));
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
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      },
    );
  }

  #rejectTooLarge(req: IncomingMessage, res: ServerResponse, what: string): void {
    this.#rejectedTooLarge++;
    this.#deps.onRejected?.(this.target.id, 'body_too_large');
    this.#deps.logger.warn(`${this.name}: refused a request body over the limit`, { path: pathOf(req.url), limitBytes: this.#options.maxRequestBytes });
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
    res.writeHead(413, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), connection: 'close' });
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
    let body: PassThrough | undefined;
    const replay = new BodyReplay(this.#options.captureMaxBytes);
    // the upstream's first answer byte ends any chance of a retry: the kept body goes
    let exchange = new UpstreamExchange(res, () => replay.release());
    res.on('close', () => {
      if (!res.writableFinished) exchange.cancel(); // the client went away: cancel upstream
    });

    let tooLarge = false;
    let decide: (() => Promise<void>) | undefined;
    let markForwarded: () => void = () => undefined;
    const forwarded = new Promise<void>((resolve) => (markForwarded = resolve));
    let routerIds: RouterSideIds | null = null;
    let requestId = '';
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      const pass = new PassThrough();
      // first listener: a body crossing the limit never reaches the capture or the upstream
      let received = 0;
      req.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received <= limit) {
          replay.record(chunk);
          return;
        }
        if (tooLarge) return;
        tooLarge = true;
        exchange.cancel();
        const current = body ?? pass;
        req.unpipe(current);
        current.destroy();
        this.#rejectTooLarge(req, res, `sent more than ${limit} bytes`);
      });
      // forwarding before reading: each chunk is handed to the upstream socket before the scanner looks at it
      req.pipe(pass);
      if (isCtx) {
        const capture = new BodyCapture(this.#options.captureMaxBytes, 0);
        // the prompt is read as the body streams through, chunk by chunk; the capture is only for the rare body the
        // scanner hands to the text path (several prompts) and for a scan thread that died
        const encoding = ctxBodyEncoding(req.headers);
        const scan = this.#scans.open(encoding);
        const inflight = this.#deps.inflight.snapshot();
        this.#deps.inflight.inc(this.target.id);
        requestId = `relay-${this.target.id}-${++this.#requestCounter}`;
        let decision: Promise<void> | undefined;
        const infoOf = async (): Promise<CtxRequestInfo> => {
          if (!capture.complete) {
            this.#capturesTruncated++;
            scan.drop();
            return unreadableCtxRequest('too_large', req.headers);
          }
          const scanned = await scan.finish(req.headers).catch(() => undefined);
          let read: CtxRequestInfo;
          if (scanned !== null && scanned !== undefined) read = scanned;
          // the JSON text path (several prompts, strings), or a scan thread that died: read the capture here
          else if (encoding === 'json') read = parseCtxRequest(capture.text(), req.headers);
          else {
            const inline = createCtxBodyReader(encoding);
            inline.feed(capture.bytes());
            read = inline.finish(req.headers) ?? unreadableCtxRequest('malformed', req.headers);
          }
          // a render is CPU the forwarding would share: it starts once this request's answer went out (the decision's
          // slot in the gate keeps the order meanwhile)
          if (this.#deps.render !== undefined && read.promptTokens === null) await forwarded;
          const withIds = await withRouterSideIds(read, this.#deps.render, () => capture.bytes(), encoding, (result, reason) => this.#deps.onRender?.(this.target.id, result, reason));
          routerIds = withIds.routerIds;
          return withIds.info;
        };
        decide = () => {
          if (decision !== undefined) return decision;
          const info = infoOf();
          const slot = this.#gate.slot();
          decision = this.#lastDecision
            .then(async () => slot(record(await info)))
            .catch((err: unknown) => this.#deps.logger.error(`${this.name}: recording a decision failed`, { error: String(err) }))
            .finally(() => slot(null));
          this.#lastDecision = decision;
          return decision;
        };
        const record = (info: CtxRequestInfo): Observation => {
          if (info.disaggRequestId !== null) requestId = info.disaggRequestId;
          if (info.unreadable !== null) {
            this.#unreadable.set(info.unreadable, (this.#unreadable.get(info.unreadable) ?? 0) + 1);
            this.#deps.onUnreadable?.(this.target.id, info.unreadable);
          }
          return {
            kind: 'decision',
            ts,
            requestId,
            correlationId: info.correlationId,
            server: this.target.id,
            promptTokens: info.promptTokens,
            promptTokenCount: info.promptTokens?.length ?? null,
            ...(routerIds?.from === 'tokenizer' ? { promptTokensFrom: 'tokenizer' as const } : {}),
            inflight,
            promptForm: info.promptForm,
            unreadable: info.unreadable,
          };
        };
        req.on('data', (chunk: Buffer) => {
          if (tooLarge || decision !== undefined) return; // a decision already taken reads no more
          capture.add(chunk);
          if (capture.complete) scan.feed(chunk);
        });
        req.on('end', () => void decide?.());
      }
      body = pass;
    }

    let ok = false;
    let response: Promise<CtxResponseInfo> | null = null;
    try {
      // a context-only answer carries the worker's prompt ids (up to captureMaxBytes is kept); usage comes last, so a
      // longer response keeps only its tail and concurrency cannot multiply a big capture
      const capture = isCtx ? new BodyCapture(this.#options.captureMaxBytes, RESPONSE_TAIL_BYTES) : undefined;
      const send = (dispatcher: Pool | Client) =>
        exchange.run(dispatcher, { method: req.method ?? 'GET', path: req.url ?? '/', headers: upstreamRequestHeaders(req.headers), body: body ?? null }, capture);
      let upstream;
      try {
        upstream = await send(this.#pool);
      } catch (err) {
        // the connection was lost before any response byte (a worker closing an idle socket as it was reused):
        // once more, on a connection of its own, never a 502 for what the worker never saw answered
        if (exchange.cancelled || exchange.responded || tooLarge || !replay.replayable || !isConnectionLost(err)) throw err;
        this.#upstreamRetries++;
        if (body !== undefined) body = replay.replay(req, body);
        exchange = new UpstreamExchange(res, () => replay.release());
        const fresh = new Client(this.target.upstream, { headersTimeout: this.#options.proxyTimeoutMs, bodyTimeout: this.#options.proxyTimeoutMs, pipelining: 1 });
        try {
          upstream = await send(fresh);
        } finally {
          void fresh.close().catch(() => undefined);
        }
      }
      ok = upstream.statusCode >= 200 && upstream.statusCode < 300;
      if (capture !== undefined) {
        const ct = upstream.headers['content-type'];
        const sse = typeof ct === 'string' && ct.includes('text/event-stream');
        if (!capture.complete) this.#capturesTruncated++;
        const msgpack = upstream.headers[MSGPACK_FLAG_HEADER] === '1';
        response = this.#scans.response(capture.bytes(), { sse, complete: capture.complete, msgpack });
      }
      if (upstream.statusCode < 500) this.#deps.status.ok(this.name);
    } catch (err) {
      if (!exchange.cancelled) {
        const message = err instanceof Error ? err.message : String(err);
        this.#deps.status.fail(this.name, reasonOf(err), `${this.target.upstream}: ${message}`);
        if (!res.headersSent) {
          const text = JSON.stringify({ error: { message: `kvsentinel relay: upstream ${this.target.id} failed: ${message}`, type: 'bad_gateway' } });
          res.writeHead(502, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
          res.end(text);
        } else {
          res.destroy();
        }
      }
    } finally {
      markForwarded();
      if (isCtx) {
        this.#deps.inflight.dec(this.target.id);
        // the worker stored this request's blocks by the time it answered: drain now, as the router's
        // finish_request polls, so worker truth never waits for the timer (nor for a router that never polls)
        if (ok && this.#options.drainEvents && !this.#stopSignal.signal.aborted) void this.#events.drainNow();
        const latencyMs = performance.now() - startedAt;
        // the decision first (recorded when the scan answered), then the outcome
        await decide?.();
        const usage = response === null ? null : await response;
        const check = ok ? renderCheckOf({ ts: this.#deps.clock(), requestId, server: this.target.id }, routerIds, usage?.workerPromptTokens, this.#deps.render) : null;
        if (check !== null) this.#deps.sink.apply(check);
        this.#deps.sink.apply({
          kind: 'outcome',
          ts: this.#deps.clock(),
          requestId,
          server: this.target.id,
          ok,
          promptTokens: usage?.promptTokens ?? null,
          cachedTokens: usage?.cachedTokens ?? null,
          latencyMs,
          workerPromptTokens: usage?.workerPromptTokens ?? null,
        });
        this.#deps.onProxied?.(this.target.id, latencyMs / 1000);
      }
    }
  }
}
