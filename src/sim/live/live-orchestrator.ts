// The disaggregated orchestrator on a real port (docs/trtllm-wire.md §5, docs/design.md §8, §9). Per request: route with the
// model's router, send the context_only request over HTTP to the chosen CTX server (`host:port`, a worker or a relay),
// then finish_request: `POST {ctx}/kv_cache_events` per the router's poll policy, parsed losslessly and applied to the
// router's table (the router's synchronous poll reads the body fetched just before), then the GEN step in-process.
// Serves /v1/completions, /v1/chat/completions, /health, /debug/router?since=SEQ and /debug/applied-events.
import { KvsentinelError } from '../../core/errors.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Agent } from 'undici';
import type { HashAlgo, KvEvent } from '../../core/wire/kv-event.js';
import type { WireIssue } from '../../core/wire/wire-issue.js';
import {
  orchestratorLine,
  pollFailureLine,
  pyRepr,
  requestLogLine,
  routerConfigLines,
  VIRTUAL_EPOCH_MS,
  type LogLevel,
} from '../log-lines.js';
import { StaticPrompt } from '../prompt.js';
import { createRouter, routerPolls, routerStartupLines } from '../routers/create-router.js';
import type { RouteRequest, Router } from '../routers/router.js';
import type { GenConfig, RouterConfig } from '../sim-config.js';
import { contextOnlyRequest } from './ctx-request-body.js';
import { DigestLog } from './event-digest.js';
import {
  dispatch,
  HttpError,
  LiveHttpServer,
  readBody,
  sendOnce,
  sendJsonText,
  sendText,
  type Handler,
} from './http-kit.js';
import type { LiveScheduler } from './live-scheduler.js';
import { parseOpenAiRequest, type OpenAiEndpoint } from './openai-request.js';
import { generate, type GenRequest } from './gen-step.js';
import { PerfMetricsJoin } from './perf-metrics-join.js';
import { DecisionHistory } from './router-debug-view.js';
import type { ModelTokenizer } from '../../sources/tokenizer/model-tokenizer.js';
import { tokenizeRequest } from './sim-tokenizers.js';
import { contentAffinityKey } from '../routers/route-affinity.js';
import {
  fetchPerfMetrics,
  fetchServerInfo,
  pollKvEvents,
  sendCtx,
  type CtxRequest,
  type PollOutcome,
} from './ctx-client.js';

/** One CTX server in the orchestrator's context_servers list. */
export interface CtxTarget {
  /** the worker id it stands for (ctx0 …) */
  readonly id: string;
  /** host:port the orchestrator sends to (a worker, or a relay in front of it) */
  readonly address: string;
}

export interface LiveOrchestratorOptions {
  readonly host: string;
  readonly port: number;
  readonly targets: readonly CtxTarget[];
  readonly router: RouterConfig;
  readonly gen: GenConfig;
  /** router.tokenizer, loaded */
  readonly routerTokenizer?: ModelTokenizer | null;
  /** canonical request log lines (docs/design.md §9) */
  readonly requestLog?: (line: string) => void;
  readonly requestLogPromptTokenIds?: boolean;
  /** orchestrator log lines (TensorRT-LLM format) */
  readonly orchestratorLog?: (line: string) => void;
  /** decisions kept for /debug/router (default 4096) */
  readonly decisionHistory?: number;
  /** how long start() waits for every CTX server's /server_info (real ms, default 30 s) */
  readonly serverInfoTimeoutMs?: number;
  /** CTX request timeout (real ms, default 180 s like TensorRT-LLM's req_timeout) */
  readonly requestTimeoutMs?: number;
  /**
   * the router reads each server's ZMQ KV-event stream instead of polling /kv_cache_events (routers in front of
   * vLLM / SGLang): what it received from the server's stream since the last call, by the server's address
   */
  readonly streamEvents?: (address: string) => KvEvent[];
}

export interface LiveOrchestratorStats {
  requests: number;
  ctxFailures: number;
  polls: number;
  pollFailures: number;
  eventsApplied: number;
  parseIssues: number;
}

/** a routed request, as far as the rest of its life needs it: its ids and hashes, not its text */
interface Admitted {
  readonly requestId: string;
  readonly seqId: number;
  readonly server: string;
  readonly prompt: StaticPrompt;
  readonly routeRequest: RouteRequest;
  readonly ctxRequest: CtxRequest;
  readonly gen: GenRequest;
  readonly conversationId: string | null;
  readonly tokens: Uint32Array;
}

/** epoch-based `ts` for the model's log-line helpers (they add VIRTUAL_EPOCH_MS) */
function wallTs(): number {
  return Date.now() - VIRTUAL_EPOCH_MS;
}

export class LiveOrchestrator {
  readonly http: LiveHttpServer;
  readonly stats: LiveOrchestratorStats = {
    requests: 0,
    ctxFailures: 0,
    polls: 0,
    pollFailures: 0,
    eventsApplied: 0,
    parseIssues: 0,
  };
  /** what the router applied, per CTX address */
  readonly applied = new Map<string, DigestLog>();
  readonly parseIssues: WireIssue[] = [];
  readonly #scheduler: LiveScheduler;
  readonly #options: LiveOrchestratorOptions;
  // TensorRT-LLM's OpenAIHttpClient: aiohttp keepalive_timeout=1, "below the server-side keepalive timeout"
  readonly #agent = new Agent({ keepAliveTimeout: 1_000, keepAliveMaxTimeout: 1_000, connections: 256 });
  readonly #prefetched = new Map<string, PollOutcome>();
  readonly #history: DecisionHistory;
  readonly #algos = new Map<string, HashAlgo>();
  readonly #workerTpb = new Map<string, number>();
  readonly #perfJoin = new PerfMetricsJoin();
  #router: Router | null = null;
  #seq = 0;
  #requestSeq = 0;

  constructor(scheduler: LiveScheduler, options: LiveOrchestratorOptions) {
    this.#scheduler = scheduler;
    this.#options = options;
    this.#history = new DecisionHistory(options.decisionHistory ?? 4096);
    for (const t of options.targets) {
      this.applied.set(t.address, new DigestLog());
    }
    this.http = new LiveHttpServer(options.host, options.port, (req, res, url) =>
      dispatch(this.#routes, req, res, url),
    );
  }

  get url(): string {
    return this.http.url;
  }

  get router(): Router {
    if (this.#router === null) throw new KvsentinelError('internal', 'the orchestrator has not started');
    return this.#router;
  }

  /** whether finish_request polls /kv_cache_events */
  get polls(): boolean {
    return this.#options.router.type === 'kv_cache_aware' && this.#options.router.pollOnFinish;
  }

  #log(level: LogLevel, message: string, args: readonly (string | number)[] = []): void {
    this.#options.orchestratorLog?.(
      orchestratorLine(wallTs(), level, message, args, this.#options.router.logFormat ?? 'trtllm'),
    );
  }

  /** reads every CTX server's /server_info (like the router at start-up), builds the router, listens */
  async start(): Promise<void> {
    const addresses = this.#options.targets.map((t) => t.address);
    const infos = await Promise.all(addresses.map((a) => this.#serverInfo(a)));
    this.#router = createRouter(this.#options.router, addresses, {
      hashAlgo: (server) => this.#algos.get(server) ?? 'v1_block_key',
      workerTokensPerBlock: (server) => this.#workerTpb.get(server) ?? null,
      log: (level, message) => this.#log(level, message),
      pollEvents: (server) => this.#takePolled(server),
      onPollFailure: (server, message) => {
        this.stats.pollFailures++;
        this.#log('W', pollFailureLine(server, message));
      },
      onPolled: (server, events) => {
        this.stats.eventsApplied += events.length;
        this.applied.get(server)?.add(events);
      },
    });
    const configured = this.#options.router.tokensPerBlock === 0 ? null : this.#options.router.tokensPerBlock;
    const format = this.#options.router.logFormat ?? 'trtllm';
    for (const line of routerConfigLines(this.#router.settings, addresses, configured, format)) this.#log('I', line);
    // the stock line names no server; 'formatted' builds name it first
    addresses.forEach((a, i) =>
      this.#log('I', `${format === 'trtllm' ? '' : `${a} `}server is ready with info: ${pyRepr(infos[i])}`),
    );
    for (const line of routerStartupLines(this.#router)) this.#log(line.level, line.message, line.args);
    await this.http.listen();
  }

  async stop(): Promise<void> {
    await this.http.close();
    await this.#agent.destroy();
  }

  async #serverInfo(address: string): Promise<unknown> {
    const info = await fetchServerInfo(this.#agent, address, this.#options.serverInfoTimeoutMs ?? 30_000);
    this.#algos.set(address, info.kvCacheHashAlgo ?? 'v1_block_key');
    if (info.tokensPerBlock !== null) this.#workerTpb.set(address, info.tokensPerBlock);
    return info.raw;
  }

  #takePolled(server: string): KvEvent[] {
    const outcome = this.#prefetched.get(server);
    if (outcome === undefined) return [];
    if ('error' in outcome) throw new KvsentinelError('source-read-failed', outcome.error);
    return outcome.events;
  }

  /** POST {server}/kv_cache_events and parse it losslessly */
  #poll(server: string): Promise<PollOutcome> {
    this.stats.polls++;
    return pollKvEvents(this.#agent, server, this.#options.router.pollNewConnection, (issues) => {
      this.stats.parseIssues += issues.length;
      if (this.parseIssues.length < 100) this.parseIssues.push(...issues.slice(0, 100 - this.parseIssues.length));
    });
  }

  /** finish_request: (poll over HTTP first, then) decrement, backfill and apply the polled events */
  async #finish(server: string, routeRequest: RouteRequest, ok: boolean): Promise<void> {
    const router = this.router;
    if (this.polls && routerPolls(router, server)) {
      const stream = this.#options.streamEvents;
      const outcome = stream !== undefined ? { events: stream(server) } : await this.#poll(server);
      this.#prefetched.set(server, outcome);
    }
    try {
      router.finish(server, routeRequest, ok);
    } finally {
      this.#prefetched.delete(server);
    }
  }

  readonly #routes: Readonly<Record<string, Handler>> = {
    'POST /v1/completions': (req, res) => this.#serve('completions', req, res),
    'POST /v1/chat/completions': (req, res) => this.#serve('chat', req, res),
    'GET /health': (_req, res) => sendText(res, 200, '', 'text/plain'),
    'GET /debug/router': (_req, res, url) =>
      sendJsonText(res, 200, this.#history.debugRouter(this.router, url.searchParams.get('since'))),
    'GET /perf_metrics': async (_req, res) => sendJsonText(res, 200, await this.#perfMetrics()),
    'GET /debug/applied-events': (_req, res, url) =>
      sendJsonText(res, 200, this.#appliedEvents(url.searchParams.get('server'))),
  };

  async #serve(endpoint: OpenAiEndpoint, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const answer = await this.#context(endpoint, req);
    await generate(this.#scheduler, this.#options.gen, answer.gen, res, answer.requestId, answer.usage);
  }

  /** route, the context_only request, finish_request; what the GEN step needs, and nothing of the prompt, comes back */
  async #context(
    endpoint: OpenAiEndpoint,
    req: IncomingMessage,
  ): Promise<{ gen: GenRequest; requestId: string; usage: { promptTokens: number; cachedTokens: number } }> {
    const arrivalS = performance.now() / 1000;
    const a = await this.#admit(endpoint, req);
    const { server, requestId } = a;
    const ctx = await sendCtx(
      this.#agent,
      server,
      a.ctxRequest,
      a.tokens.length,
      this.#options.requestTimeoutMs ?? 180_000,
    );
    await this.#finish(server, a.routeRequest, ctx.ok);
    // routed and finished: the router's hashes of this prompt are not needed during the GEN step
    a.prompt.release();
    a.routeRequest.prompt.release?.();
    if (!ctx.ok) {
      this.stats.ctxFailures++;
      this.#log('E', `Error in context request ${requestId} to ${server}: ${ctx.error}`);
      throw new HttpError(500, `context request to ${server} failed: ${ctx.error}`);
    }
    this.#options.requestLog?.(
      requestLogLine({
        ts: wallTs(),
        requestId,
        correlationId: a.conversationId,
        ctxServer: server,
        promptTokens: ctx.promptTokens,
        cachedTokens: ctx.cachedTokens,
        ...(this.#options.requestLogPromptTokenIds === true ? { promptTokenIds: a.tokens } : {}),
      }),
    );
    if (ctx.ctxRequestId !== null)
      this.#perfJoin.add({
        ctxServer: server,
        ctxRequestId: ctx.ctxRequestId,
        disaggRequestId: a.seqId,
        arrivalS,
        firstTokenS: performance.now() / 1000,
      });
    return { gen: a.gen, requestId, usage: { promptTokens: ctx.promptTokens, cachedTokens: ctx.cachedTokens } };
  }

  /**
   * Reads, parses and routes a request and writes its context_only request. The body's text stays in here: V8 keeps
   * what an async function's registers hold, used again or not, until it returns, and a request waits at its worker
   * for seconds while hundreds of others do too.
   */
  async #admit(endpoint: OpenAiEndpoint, req: IncomingMessage): Promise<Admitted> {
    const rawBody = await readBody(req);
    const request = parseOpenAiRequest(endpoint, rawBody, req.headers);
    const router = this.router;
    this.stats.requests++;
    const seqId = ++this.#requestSeq;
    const headerId = req.headers['x-request-id'];
    const requestId =
      typeof headerId === 'string' && headerId !== ''
        ? headerId
        : `${endpoint === 'chat' ? 'chatcmpl' : 'cmpl'}-${seqId}`;
    // router.tokenizer: the router renders text and chat itself (BlockHashMixin._tokenize); else it sees the workers' ids
    const routerTokenizer = this.#options.routerTokenizer ?? null;
    const prompt = new StaticPrompt(
      routerTokenizer === null ? request.tokens : await tokenizeRequest(routerTokenizer, request),
    );
    // the newest router's conversation pin: chat only (a CompletionRequest has no messages), keyed on the body as received
    const affinityKey =
      router.settings.profile === 'newest' && endpoint === 'chat'
        ? contentAffinityKey(request.body['messages'], request.body['prompt_token_ids'])
        : null;
    const routeRequest: RouteRequest = {
      requestId,
      correlationId: request.conversationId,
      prompt: this.#options.router.tokenDrift ? prompt.drifted() : prompt,
      affinityKey,
    };
    const decision = router.route(routeRequest);
    const server = decision.server;
    this.#history.record({
      seq: ++this.#seq,
      ts: Date.now() / 1000,
      requestId,
      correlationId: request.conversationId,
      chosen: server,
      candidates: decision.candidates,
    });
    // router.write_token_ids: the router writes its own ids into a text or chat request when they are the workers'
    // (newest routers write them back only when the render fingerprints match: no drift, no tokenizer of its own)
    const r = this.#options.router;
    const writes =
      r.writeTokenIds &&
      !r.tokenDrift &&
      routerTokenizer === null &&
      (endpoint === 'chat' || request.promptJson?.startsWith('"') === true);
    const { payload, headers } = contextOnlyRequest(r, request, rawBody, {
      disaggId: seqId,
      requestId,
      routerTokens: writes ? prompt.tokens : null,
    });
    const once = sendOnce(payload);
    headers['content-length'] = String(once.length);
    return {
      requestId,
      seqId,
      server,
      prompt,
      routeRequest,
      ctxRequest: { path: endpoint === 'chat' ? '/v1/chat/completions' : '/v1/completions', body: once.body, headers },
      gen: { endpoint: request.endpoint, model: request.model, maxTokens: request.maxTokens, stream: request.stream },
      conversationId: request.conversationId,
      tokens: request.tokens,
    };
  }

  /** GET /perf_metrics: drains each CTX server's /perf_metrics and joins it with the requests served */
  #perfMetrics(): Promise<string> {
    return this.#perfJoin.drain((server) => fetchPerfMetrics(this.#agent, server));
  }

  #appliedEvents(server: string | null): string {
    const servers = this.#options.targets
      .filter((t) => server === null || t.id === server || t.address === server)
      .map((t) => {
        const log = this.applied.get(t.address)!;
        return { server: t.id, url: t.address, total: log.total, dropped: log.dropped, events: log.entries };
      });
    return JSON.stringify({ poll: this.polls, parse_issues: this.stats.parseIssues, servers });
  }
}
