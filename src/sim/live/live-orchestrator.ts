// The disaggregated orchestrator on a real port (docs/trtllm-wire.md §5, docs/design.md §8, §9). Per request: route with the
// model's router, send the context_only request over HTTP to the chosen CTX server (`host:port`, a worker or a relay),
// then finish_request: `POST {ctx}/kv_cache_events` per the router's poll policy, parsed losslessly and applied to the
// router's table (the router's synchronous poll reads the body fetched just before), then the GEN step in-process.
// Serves /v1/completions, /v1/chat/completions, /health, /debug/router?since=SEQ and /debug/applied-events.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { encode } from '@msgpack/msgpack';
import { Agent, request as httpRequest } from 'undici';
import type { HashAlgo, KvEvent } from '../../core/wire/kv-event.js';
import { isJsonObject, parseLosslessJson, type JsonValue } from '../../core/wire/lossless-json.js';
import { parseKvEvents } from '../../core/wire/parse-kv-events.js';
import { parsePerfMetrics } from '../../core/wire/parse-perf-metrics.js';
import { parseServerInfo } from '../../core/wire/parse-server-info.js';
import { parseUsage } from '../../core/wire/parse-usage.js';
import { scanString, skipValue, skipWs } from '../../core/wire/json-scan.js';
import type { WireIssue } from '../../core/wire/wire-issue.js';
import { orchestratorLine, pollFailureLine, pyRepr, requestLogLine, routerConfigLines, VIRTUAL_EPOCH_MS, type LogLevel } from '../log-lines.js';
import { StaticPrompt } from '../prompt.js';
import { createRouter, routerPolls, routerStartupLines } from '../routers/create-router.js';
import type { RouteCandidate, RouteRequest, Router } from '../routers/router.js';
import type { GenConfig, RouterConfig } from '../sim-config.js';
import { DigestLog } from './event-digest.js';
import { jsonText } from './json-text.js';
import { HttpError, LiveHttpServer, readBody, sendError, sendJsonText, sendText, sseData, startSse } from './http-kit.js';
import type { LiveScheduler } from './live-scheduler.js';
import { parseOpenAiRequest, type OpenAiEndpoint, type OpenAiRequest } from './openai-request.js';
import { chunkBody, fillerText, responseBody, type ResponseHead } from './openai-response.js';
import type { ModelTokenizer } from '../../sources/tokenizer/model-tokenizer.js';
import { tokenizeRequest } from './sim-tokenizers.js';
import { contentAffinityKey } from '../routers/route-affinity.js';

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

interface Decision {
  readonly seq: number;
  /** epoch seconds */
  readonly ts: number;
  readonly requestId: string;
  readonly correlationId: string | null;
  readonly chosen: string;
  readonly candidates: readonly RouteCandidate[] | null;
}

export interface LiveOrchestratorStats {
  requests: number;
  ctxFailures: number;
  polls: number;
  pollFailures: number;
  eventsApplied: number;
  parseIssues: number;
}

/** a served request waiting for its CTX worker's /perf_metrics entry (the disaggregated join, docs/trtllm-wire.md §5) */
interface PerfKey {
  readonly ctxServer: string;
  readonly ctxRequestId: string;
  readonly disaggRequestId: number;
  readonly arrivalS: number;
  readonly firstTokenS: number;
}

const PERF_KEYS_MAX = 10_000;

type CtxOutcome = { readonly ok: true; readonly promptTokens: number; readonly cachedTokens: number; readonly ctxRequestId: string | null } | { readonly ok: false; readonly error: string };

/** choices[0].disaggregated_params.ctx_request_id of a CTX response, exactly (lossless) */
function ctxRequestIdOf(text: string): string | null {
  // the prompt's ids (tens of thousands of integers) are not needed here: parse the rest
  const members = rawMembersExcept(text, PROMPT_ID_KEYS);
  const root = parseLosslessJson(members === null ? text : `{${members.join(',')}}`).value;
  if (!isJsonObject(root)) return null;
  const choices = root['choices'];
  const first: JsonValue | undefined = Array.isArray(choices) ? choices[0] : undefined;
  const params = isJsonObject(first) ? first['disaggregated_params'] : undefined;
  const id = isJsonObject(params) ? params['ctx_request_id'] : undefined;
  return typeof id === 'bigint' || typeof id === 'string' ? String(id) : null;
}

type PollOutcome = { readonly events: KvEvent[] } | { readonly error: string };

/** epoch-based `ts` for the model's log-line helpers (they add VIRTUAL_EPOCH_MS) */
function wallTs(): number {
  return Date.now() - VIRTUAL_EPOCH_MS;
}

function errorText(err: unknown, address: string): string {
  const code = (err as { code?: unknown }).code;
  if (code === 'ECONNREFUSED') {
    const [host, port] = address.split(/:(?=\d+$)/);
    return `Cannot connect to host ${address} ssl:default [Connect call failed ('${host}', ${port})]`;
  }
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return '';
  if (code === 'UND_ERR_SOCKET' || code === 'ECONNRESET') return 'Server disconnected';
  return err instanceof Error ? err.message : String(err);
}

const CTX_OVERRIDDEN_KEYS: readonly string[] = ['stream', 'stream_options', 'disaggregated_params'];
const PROMPT_ID_KEYS: readonly string[] = ['prompt_token_ids', 'prompt_token_ids_b64'];

/**
 * The raw text of every top-level member of a JSON object whose key is not in `drop`, in order; null when the text is
 * not a plain object (the caller then re-serializes). Keeps numbers exactly as sent: `-0`, `1.0` and integers past
 * 2^53 would change under JSON.parse + JSON.stringify.
 */
function rawMembersExcept(text: string, drop: readonly string[]): string[] | null {
  try {
    const kept: string[] = [];
    let i = skipWs(text, 0);
    if (text.charCodeAt(i) !== 123) return null;
    i = skipWs(text, i + 1);
    if (text.charCodeAt(i) === 125) return skipWs(text, i + 1) === text.length ? kept : null;
    for (;;) {
      if (text.charCodeAt(i) !== 34) return null;
      const start = i;
      const keyEnd = scanString(text, i);
      const key = JSON.parse(text.slice(i, keyEnd)) as string;
      i = skipWs(text, keyEnd);
      if (text.charCodeAt(i) !== 58) return null;
      const end = skipValue(text, skipWs(text, i + 1));
      if (!drop.includes(key)) kept.push(text.slice(start, end));
      i = skipWs(text, end);
      const c = text.charCodeAt(i);
      if (c === 125) return skipWs(text, i + 1) === text.length ? kept : null;
      if (c !== 44) return null;
      i = skipWs(text, i + 1);
    }
  } catch {
    return null;
  }
}

/**
 * The context_only request: the client's body with stream off and disaggregated_params set. When the client sent
 * none of those keys, the raw text is extended in place (no re-serialization of a long prompt); otherwise those keys
 * are cut out of the raw text, so every other member still reaches the server byte for byte.
 */
export function ctxBody(request: OpenAiRequest, rawBody: string, disaggregatedParams: string): string {
  const end = rawBody.lastIndexOf('}');
  const untouched = CTX_OVERRIDDEN_KEYS.every((k) => !(k in request.body));
  if (end > 0 && untouched && (request.promptJson !== null || Object.keys(request.body).length > 0)) {
    return `${rawBody.slice(0, end)},"stream":false,"disaggregated_params":${disaggregatedParams}}`;
  }
  const members = rawMembersExcept(rawBody, CTX_OVERRIDDEN_KEYS);
  if (members !== null) return `{${[...members, '"stream":false', `"disaggregated_params":${disaggregatedParams}`].join(',')}}`;
  const body: Record<string, unknown> = { ...request.body, stream: false };
  delete body['stream_options'];
  const prompt = request.promptJson === null ? '' : `"prompt":${request.promptJson},`;
  return `{${prompt}${JSON.stringify(body).slice(1, -1)},"disaggregated_params":${disaggregatedParams}}`;
}

/** The context_only request as a value (for msgpack): the client's body, stream off, the disaggregated params. */
function ctxObject(request: OpenAiRequest, disaggregatedParams: Record<string, unknown>, routerTokens: Uint32Array | null): Record<string, unknown> {
  const body: Record<string, unknown> = { ...request.body, stream: false, disaggregated_params: disaggregatedParams };
  delete body['stream_options'];
  if (request.promptJson !== null) body['prompt'] = JSON.parse(request.promptJson) as unknown;
  if (routerTokens !== null) body['prompt_token_ids'] = Array.from(routerTokens);
  return body;
}

export class LiveOrchestrator {
  readonly http: LiveHttpServer;
  readonly stats: LiveOrchestratorStats = { requests: 0, ctxFailures: 0, polls: 0, pollFailures: 0, eventsApplied: 0, parseIssues: 0 };
  /** what the router applied, per CTX address */
  readonly applied = new Map<string, DigestLog>();
  readonly parseIssues: WireIssue[] = [];
  readonly #scheduler: LiveScheduler;
  readonly #options: LiveOrchestratorOptions;
  // TensorRT-LLM's OpenAIHttpClient: aiohttp keepalive_timeout=1, "below the server-side keepalive timeout"
  readonly #agent = new Agent({ keepAliveTimeout: 1_000, keepAliveMaxTimeout: 1_000, connections: 256 });
  readonly #prefetched = new Map<string, PollOutcome>();
  readonly #history: Decision[] = [];
  readonly #algos = new Map<string, HashAlgo>();
  readonly #workerTpb = new Map<string, number>();
  #perfKeys: PerfKey[] = [];
  #router: Router | null = null;
  #seq = 0;
  #requestSeq = 0;

  constructor(scheduler: LiveScheduler, options: LiveOrchestratorOptions) {
    this.#scheduler = scheduler;
    this.#options = options;
    for (const t of options.targets) {
      this.applied.set(t.address, new DigestLog());
    }
    this.http = new LiveHttpServer(options.host, options.port, (req, res, url) => this.#handle(req, res, url));
  }

  get url(): string {
    return this.http.url;
  }

  get router(): Router {
    if (this.#router === null) throw new Error('the orchestrator has not started');
    return this.#router;
  }

  /** whether finish_request polls /kv_cache_events */
  get polls(): boolean {
    return this.#options.router.type === 'kv_cache_aware' && this.#options.router.pollOnFinish;
  }

  #log(level: LogLevel, message: string): void {
    this.#options.orchestratorLog?.(orchestratorLine(wallTs(), level, message));
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
    for (const line of routerConfigLines(this.#router.settings, addresses, configured)) this.#log('I', line);
    addresses.forEach((a, i) => this.#log('I', `${a} server is ready with info: ${pyRepr(infos[i])}`));
    for (const line of routerStartupLines(this.#router)) this.#log(line.level, line.message);
    await this.http.listen();
  }

  async stop(): Promise<void> {
    await this.http.close();
    await this.#agent.destroy();
  }

  async #serverInfo(address: string): Promise<unknown> {
    const deadline = performance.now() + (this.#options.serverInfoTimeoutMs ?? 30_000);
    for (;;) {
      try {
        const res = await httpRequest(`http://${address}/server_info`, { dispatcher: this.#agent, headersTimeout: 5000, bodyTimeout: 5000 });
        const text = await res.body.text();
        const parsed = parseServerInfo(text).value;
        if (res.statusCode === 200 && parsed !== null) {
          this.#algos.set(address, parsed.kvCacheHashAlgo ?? 'v1_block_key');
          if (parsed.tokensPerBlock !== null) this.#workerTpb.set(address, parsed.tokensPerBlock);
          return parsed.raw;
        }
      } catch (err) {
        if (performance.now() > deadline) throw new Error(`CTX server ${address}: /server_info unreachable (${errorText(err, address)})`, { cause: err });
      }
      if (performance.now() > deadline) throw new Error(`CTX server ${address}: /server_info did not answer 200`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  #takePolled(server: string): KvEvent[] {
    const outcome = this.#prefetched.get(server);
    if (outcome === undefined) return [];
    if ('error' in outcome) throw new Error(outcome.error);
    return outcome.events;
  }

  /** POST {server}/kv_cache_events and parse it losslessly */
  async #poll(server: string): Promise<PollOutcome> {
    this.stats.polls++;
    try {
      // router.poll_new_connection: the connection closes after the poll, so the next comes from a new port
      const reset = this.#options.router.pollNewConnection;
      const res = await httpRequest(`http://${server}/kv_cache_events`, { method: 'POST', dispatcher: this.#agent, headersTimeout: 30_000, bodyTimeout: 30_000, reset });
      const text = await res.body.text();
      if (res.statusCode !== 200) return { error: `${res.statusCode}, message='${text.slice(0, 200)}', url='http://${server}/kv_cache_events'` };
      const parsed = parseKvEvents(text);
      if (parsed.issues.length > 0) {
        this.stats.parseIssues += parsed.issues.length;
        if (this.parseIssues.length < 100) this.parseIssues.push(...parsed.issues.slice(0, 100 - this.parseIssues.length));
      }
      return { events: parsed.events.map((p) => p.event) };
    } catch (err) {
      return { error: errorText(err, server) };
    }
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

  async #handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const route = `${req.method ?? 'GET'} ${url.pathname}`;
    switch (route) {
      case 'POST /v1/completions':
        return this.#serve('completions', req, res);
      case 'POST /v1/chat/completions':
        return this.#serve('chat', req, res);
      case 'GET /health':
        return sendText(res, 200, '', 'text/plain');
      case 'GET /debug/router':
        return sendJsonText(res, 200, this.#debugRouter(url.searchParams.get('since')));
      case 'GET /perf_metrics':
        return sendJsonText(res, 200, await this.#perfMetrics());
      case 'GET /debug/applied-events':
        return sendJsonText(res, 200, this.#appliedEvents(url.searchParams.get('server')));
      default:
        return sendError(res, 404, `${route}: not found`);
    }
  }

  async #serve(endpoint: OpenAiEndpoint, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const arrivalS = performance.now() / 1000;
    const rawBody = await readBody(req);
    const request = parseOpenAiRequest(endpoint, rawBody, req.headers);
    const router = this.router;
    this.stats.requests++;
    const seqId = ++this.#requestSeq;
    const headerId = req.headers['x-request-id'];
    const requestId = typeof headerId === 'string' && headerId !== '' ? headerId : `${endpoint === 'chat' ? 'chatcmpl' : 'cmpl'}-${seqId}`;
    // router.tokenizer: the router renders text and chat itself (BlockHashMixin._tokenize); else it sees the workers' ids
    const routerTokenizer = this.#options.routerTokenizer ?? null;
    const prompt = new StaticPrompt(routerTokenizer === null ? request.tokens : await tokenizeRequest(routerTokenizer, request));
    // the newest router's conversation pin: chat only (a CompletionRequest has no messages), keyed on the body as received
    const affinityKey = router.settings.profile === 'newest' && endpoint === 'chat' ? contentAffinityKey(request.body['messages'], request.body['prompt_token_ids']) : null;
    const routeRequest: RouteRequest = { requestId, correlationId: request.conversationId, prompt: this.#options.router.tokenDrift ? prompt.drifted() : prompt, affinityKey };
    const decision = router.route(routeRequest);
    const server = decision.server;
    this.#record({ seq: ++this.#seq, ts: Date.now() / 1000, requestId, correlationId: request.conversationId, chosen: server, candidates: decision.candidates });
    // router.write_token_ids: the router writes its own ids into a text or chat request when they are the workers'
    // (newest routers write them back only when the render fingerprints match: no drift, no tokenizer of its own)
    const r = this.#options.router;
    const writes = r.writeTokenIds && !r.tokenDrift && routerTokenizer === null && (endpoint === 'chat' || request.promptJson?.startsWith('"') === true);
    const ctx = await this.#sendCtx(server, endpoint, request, rawBody, seqId, requestId, writes ? prompt.tokens : null);
    await this.#finish(server, routeRequest, ctx.ok);
    // routed and finished: the router's hashes of this prompt are not needed during the GEN step
    prompt.release();
    routeRequest.prompt.release?.();
    if (!ctx.ok) {
      this.stats.ctxFailures++;
      this.#log('E', `Error in context request ${requestId} to ${server}: ${ctx.error}`);
      throw new HttpError(500, `context request to ${server} failed: ${ctx.error}`);
    }
    this.#options.requestLog?.(
      requestLogLine({
        ts: wallTs(),
        requestId,
        correlationId: request.conversationId,
        ctxServer: server,
        promptTokens: ctx.promptTokens,
        cachedTokens: ctx.cachedTokens,
        ...(this.#options.requestLogPromptTokenIds === true ? { promptTokenIds: request.tokens } : {}),
      }),
    );
    if (ctx.ctxRequestId !== null) {
      this.#perfKeys.push({ ctxServer: server, ctxRequestId: ctx.ctxRequestId, disaggRequestId: seqId, arrivalS, firstTokenS: performance.now() / 1000 });
      if (this.#perfKeys.length > PERF_KEYS_MAX) this.#perfKeys.splice(0, this.#perfKeys.length - PERF_KEYS_MAX);
    }
    await this.#generate(request, res, requestId, { promptTokens: ctx.promptTokens, cachedTokens: ctx.cachedTokens });
  }

  /** GET /perf_metrics: drains each CTX server's /perf_metrics and joins it with the requests served */
  async #perfMetrics(): Promise<string> {
    const servers = [...new Set(this.#perfKeys.map((k) => k.ctxServer))];
    const byServer = new Map<string, Map<string, JsonValue>>();
    await Promise.all(
      servers.map(async (server) => {
        const entries = new Map<string, JsonValue>();
        byServer.set(server, entries);
        try {
          const res = await httpRequest(`http://${server}/perf_metrics`, { dispatcher: this.#agent, headersTimeout: 10_000, bodyTimeout: 10_000 });
          const text = await res.body.text();
          if (res.statusCode !== 200) return;
          for (const entry of parsePerfMetrics(text).value) {
            if (entry.kind === 'worker' && entry.requestId !== null) entries.set(String(entry.requestId), entry.raw);
          }
        } catch {
          // an unreachable server's requests stay pending for the next call
        }
      }),
    );
    const out: string[] = [];
    const pending: PerfKey[] = [];
    for (const key of this.#perfKeys) {
      const ctx = byServer.get(key.ctxServer)?.get(key.ctxRequestId);
      if (ctx === undefined) {
        pending.push(key);
        continue;
      }
      out.push(
        `{"ctx_server":${JSON.stringify(key.ctxServer)},"gen_server":null,"disagg_request_id":${key.disaggRequestId},` +
          `"disagg_server_arrival_time":${key.arrivalS},"disagg_server_first_token_time":${key.firstTokenS},` +
          `"ctx_perf_metrics":${jsonText(ctx)},"gen_perf_metrics":null}`,
      );
    }
    this.#perfKeys = pending;
    return `[${out.join(',')}]`;
  }

  async #sendCtx(server: string, endpoint: OpenAiEndpoint, request: OpenAiRequest, rawBody: string, disaggId: number, requestId: string, routerTokens: Uint32Array | null): Promise<CtxOutcome> {
    const r = this.#options.router;
    const disaggParams = {
      request_type: 'context_only',
      disagg_request_id: disaggId,
      schedule_style: null,
      ...(request.conversationId !== null ? { conversation_id: request.conversationId } : {}),
      ...(r.returnPromptTokenIdsB64 ? { return_prompt_token_ids_b64: true } : {}),
    };
    let payload: string | Uint8Array;
    let headers: Record<string, string>;
    if (r.ctxBody === 'msgpack') {
      // the newest client: msgspec msgpack of the request, Content-Type still application/json, no X-Correlation-ID
      payload = encode(ctxObject(request, disaggParams, routerTokens));
      headers = { 'content-type': 'application/json', 'x-trtllm-msgpack': '1' };
    } else {
      const written = routerTokens === null ? '' : `,"prompt_token_ids":[${Array.from(routerTokens).join(',')}]`;
      const json = ctxBody(request, rawBody, JSON.stringify(disaggParams));
      payload = written === '' ? json : `${json.slice(0, -1)}${written}}`;
      headers = { 'content-type': 'application/json', 'x-request-id': requestId };
      if (request.correlationHeader !== null) headers['x-correlation-id'] = request.correlationHeader;
    }
    const path = endpoint === 'chat' ? '/v1/chat/completions' : '/v1/completions';
    const timeout = this.#options.requestTimeoutMs ?? 180_000;
    try {
      const res = await httpRequest(`http://${server}${path}`, { method: 'POST', body: payload, headers, dispatcher: this.#agent, headersTimeout: timeout, bodyTimeout: timeout });
      const text = await res.body.text();
      if (res.statusCode !== 200) return { ok: false, error: `${res.statusCode} ${text.slice(0, 200)}` };
      const usage = parseUsage(text).value;
      return { ok: true, promptTokens: usage?.promptTokens ?? request.tokens.length, cachedTokens: usage?.cachedTokens ?? 0, ctxRequestId: ctxRequestIdOf(text) };
    } catch (err) {
      return { ok: false, error: errorText(err, server) };
    }
  }

  /** the GEN step: decode time on the model's clock; usage rewritten from the CTX response */
  async #generate(request: OpenAiRequest, res: ServerResponse, requestId: string, ctx: { promptTokens: number; cachedTokens: number }): Promise<void> {
    const outputTokens = request.maxTokens ?? 16;
    const head: ResponseHead = { endpoint: request.endpoint, id: requestId, created: Math.floor(Date.now() / 1000), model: request.model };
    const usage = { promptTokens: ctx.promptTokens, completionTokens: outputTokens, cachedTokens: ctx.cachedTokens };
    const genMs = this.#options.gen.overheadMs + outputTokens * this.#options.gen.msPerToken;
    if (request.stream) {
      startSse(res);
      sseData(res, chunkBody(head, fillerText(1), null, null));
    }
    await new Promise<void>((resolve) => {
      this.#scheduler.at(this.#scheduler.now() + genMs, resolve);
      if (this.#scheduler.stopped) resolve();
    });
    if (!request.stream) {
      sendJsonText(res, 200, responseBody(head, fillerText(outputTokens), usage, null));
      return;
    }
    sseData(res, chunkBody(head, fillerText(outputTokens - 1), 'length', usage));
    sseData(res, '[DONE]');
    res.end();
  }

  #record(decision: Decision): void {
    const max = this.#options.decisionHistory ?? 4096;
    this.#history.push(decision);
    if (this.#history.length > max * 2) this.#history.splice(0, this.#history.length - max);
  }

  /** docs/design.md §8 */
  #debugRouter(sinceParam: string | null): string {
    const since = sinceParam !== null && /^\d+$/.test(sinceParam) ? Number(sinceParam) : 0;
    const router = this.router;
    const s = router.settings;
    return JSON.stringify({
      router: {
        type: s.type,
        tokens_per_block: s.tokensPerBlock,
        max_batch_size: s.maxBatchSize,
        backfill_block_hashes_on_finish: s.backfillBlockHashesOnFinish,
      },
      servers: router.state().map((st) => ({
        url: st.server,
        active_requests: st.activeRequests,
        hash_algo: st.hashAlgo,
        block_table_size: st.blockTableSize,
        polls: st.polls,
        poll_failures: st.pollFailures,
      })),
      decisions: this.#history
        .filter((d) => d.seq > since)
        .map((d) => ({
          seq: d.seq,
          ts: d.ts,
          request_id: d.requestId,
          correlation_id: d.correlationId,
          chosen: d.chosen,
          candidates: d.candidates?.map((c) => ({ server: c.server, matched_tokens: c.matchedTokens, active_requests: c.activeRequests, score: c.score })) ?? null,
        })),
    });
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
