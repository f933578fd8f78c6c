// One simulated CTX worker on a real port (docs/trtllm-wire.md §2, §4): the model's CtxWorker behind trtllm-serve's
// endpoints. POST /v1/completions and /v1/chat/completions (context_only or plain; JSON or SSE with usage in the
// final chunk), destructive POST /kv_cache_events (TensorRT-LLM's exact compact JSON), GET /server_info, /health,
// draining /perf_metrics, /prometheus/metrics. A restart closes the port (connection refused, in-flight requests
// reset) until the model's downtime is over; a competing consumer drains the queue in the background.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { serializeKvEvents } from '../../core/wire/serialize-kv-events.js';
import { CtxWorker, WorkerDownError, type CtxResult, type CtxWorkerConfig } from '../ctx-worker.js';
import { StaticPrompt, type Prompt, type PromptBlocks } from '../prompt.js';
import type { HashAlgo } from '../../core/wire/kv-event.js';
import { PerfLog, prometheusText } from './ctx-worker-metrics.js';
import { DigestLog } from './event-digest.js';
import {
  dispatch,
  HttpError,
  LiveHttpServer,
  type Handler,
  readBody,
  readBodyBytes,
  sendJsonText,
  sendText,
  sseData,
  startSse,
} from './http-kit.js';
import type { LiveScheduler } from './live-scheduler.js';
import { parseOpenAiRequestBytes, type OpenAiEndpoint, type OpenAiRequest } from './openai-request.js';
import type { KvEvent } from '../../core/wire/kv-event.js';
import { SIM_PYTHONHASHSEED, type PublisherFormat, type VllmSimHashes } from '../publisher-format.js';
import { ZmqKvPublisher } from './zmq-kv-publisher.js';
import { chunkBody, fillerText, responseBody, type ResponseHead, type UsageNumbers } from './openai-response.js';
import type { ModelTokenizer } from '../../sources/tokenizer/model-tokenizer.js';
import { tokenizeRequest as tokenizeWithModel } from './sim-tokenizers.js';

export interface LiveCtxWorkerOptions {
  readonly host: string;
  /** 0 = any free port */
  readonly port: number;
  /** a competitor drains /kv_cache_events every `competitorPeriodMs` (virtual ms); null = none */
  readonly competitorPeriodMs: number | null;
  /** perf_metrics_max_requests (0 = /perf_metrics always []) */
  readonly perfMetricsMaxRequests: number;
  /** idle keep-alive connections are closed after this, real ms (trtllm-serve: 5 s; default 5000) */
  readonly keepAliveTimeoutMs?: number;
  /** ctx.tokenizer: text and chat prompts tokenized with the model's tokenizer; context-only answers then carry them */
  readonly tokenizer?: ModelTokenizer | null;
  /** publish KV events over ZMQ (one PUB per rank at base port + rank, replay ROUTERs); null = pull path only */
  readonly kvEventsPublisher?: {
    readonly format: PublisherFormat;
    readonly replay: boolean;
    readonly vllmHashes?: VllmSimHashes;
  } | null;
  /** keep what was published for an in-process router that reads the stream (takeStreamEvents) */
  readonly streamCopy?: boolean;
}

export interface LiveCtxWorkerStats {
  httpRequests: number;
  drainsServed: number;
  eventsServed: number;
  /** events taken by the competing consumer */
  eventsStolen: number;
}

const NO_TOKENS = new Uint32Array(0);

/**
 * A chat context-only answer that asked with return_prompt_token_ids_b64 (openai_server.py): the prompt's ids as
 * int32 little-endian in base64, the list null; otherwise context-only answers carry `prompt_token_ids`.
 */
function promptTokenIdsB64Members(tokens: Uint32Array): string {
  const bytes = Buffer.alloc(tokens.length * 4);
  tokens.forEach((id, i) => bytes.writeInt32LE(id, i * 4));
  return `"prompt_token_ids":null,"prompt_token_ids_b64":"${bytes.toString('base64')}"`;
}

/**
 * An HTTP request's prompt that lets go of its tokens and hashes once the request is answered: the model's FIFO
 * keeps consumed entries around for a while, harmless for trajectory views in virtual time but, live, each
 * prompt is its own buffer (tens of MB per worker under the seed workload).
 */
class ReleasablePrompt implements Prompt {
  #inner: StaticPrompt | null;

  constructor(tokens: Uint32Array) {
    this.#inner = new StaticPrompt(tokens);
  }

  get tokens(): Uint32Array {
    return this.#inner?.tokens ?? NO_TOKENS;
  }

  blocks(blockSize: number, algo: HashAlgo): PromptBlocks {
    return (this.#inner ?? new StaticPrompt(NO_TOKENS)).blocks(blockSize, algo);
  }

  drifted(): Prompt {
    return (this.#inner ?? new StaticPrompt(NO_TOKENS)).drifted();
  }

  release(): void {
    this.#inner = null;
  }
}

export class LiveCtxWorker {
  readonly worker: CtxWorker;
  readonly http: LiveHttpServer;
  /** every event this worker returned on POST /kv_cache_events, in order */
  readonly served = new DigestLog();
  readonly stats: LiveCtxWorkerStats = { httpRequests: 0, drainsServed: 0, eventsServed: 0, eventsStolen: 0 };
  readonly #scheduler: LiveScheduler;
  readonly #options: LiveCtxWorkerOptions;
  readonly #perf: PerfLog;
  #ctxRequestSeq = 0;
  #cancelCompetitor: (() => void) | null = null;
  #restarting: Promise<void> | null = null;
  #stopped = false;
  /** the worker's ZMQ KV-event publisher, when it has one */
  publisher: ZmqKvPublisher | null = null;
  #streamCopy: KvEvent[] = [];

  constructor(scheduler: LiveScheduler, config: CtxWorkerConfig, options: LiveCtxWorkerOptions) {
    this.#scheduler = scheduler;
    this.#options = options;
    this.#perf = new PerfLog(options.perfMetricsMaxRequests);
    this.worker = new CtxWorker(scheduler, config);
    this.http = new LiveHttpServer(
      options.host,
      options.port,
      (req, res, url) => this.#handle(req, res, url),
      options.keepAliveTimeoutMs ?? 5_000,
    );
  }

  get id(): string {
    return this.worker.id;
  }

  get url(): string {
    return this.http.url;
  }

  /** host:port, as a TensorRT-LLM context_servers list names it */
  get address(): string {
    return this.http.address;
  }

  /** What a router subscribed to this worker's stream received since the last call. */
  takeStreamEvents(): KvEvent[] {
    const events = this.#streamCopy;
    this.#streamCopy = [];
    return events;
  }

  async start(): Promise<void> {
    const spec = this.#options.kvEventsPublisher ?? null;
    if (spec !== null && this.publisher === null) {
      const vllmHashes =
        spec.vllmHashes === undefined || spec.vllmHashes === 'sim'
          ? null
          : { seed: SIM_PYTHONHASHSEED, ints: spec.vllmHashes === 'sha256_cbor_int' };
      const publisher = new ZmqKvPublisher({
        format: spec.format,
        ranks: this.worker.config.ranks,
        blockSize: this.worker.config.blockSize,
        host: this.#options.host,
        replay: spec.replay,
        vllmHashes,
      });
      await publisher.start();
      this.publisher = publisher;
      const copy = this.#options.streamCopy === true;
      this.worker.events.pushSink = {
        publish: (rank, event) => {
          publisher.publish(rank, event);
          if (copy && this.#streamCopy.length < 1_000_000) this.#streamCopy.push(event);
        },
        restart: () => {
          publisher.restart();
          if (copy)
            this.#streamCopy.push({
              eventId: null,
              data: { type: 'all_cleared' },
              windowSize: null,
              attentionDpRank: null,
              hashAlgo: null,
              layerGroupId: null,
            });
        },
      };
    }
    await this.http.listen();
    if (this.#options.competitorPeriodMs !== null && this.#cancelCompetitor === null) {
      this.#cancelCompetitor = this.#scheduler.every(this.#options.competitorPeriodMs, () => {
        try {
          this.stats.eventsStolen += this.worker.drainEvents().length;
        } catch {
          // the competitor's failures are invisible to everyone else
        }
      });
    }
  }

  /**
   * Crash and come back (ctx.restart_downtime later, virtual time): in-flight requests are reset, the port refuses
   * connections during the downtime, the caches are empty and event ids start at 0 again. Resolves once it listens.
   */
  restart(): Promise<void> {
    if (this.#restarting !== null) return this.#restarting;
    this.worker.restart();
    this.#restarting = (async () => {
      await this.http.close();
      await new Promise<void>((resolve) => {
        this.#scheduler.at(this.#scheduler.now() + this.worker.config.restartDowntimeMs, resolve);
        if (this.#scheduler.stopped) resolve();
      });
      if (!this.#stopped) await this.http.listen();
      this.#restarting = null;
    })();
    return this.#restarting;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#cancelCompetitor?.();
    await this.http.close();
    await this.publisher?.stop();
  }

  readonly #routes: Readonly<Record<string, Handler>> = {
    'POST /v1/completions': (req, res) => this.#completion('completions', req, res),
    'POST /v1/chat/completions': (req, res) => this.#completion('chat', req, res),
    'POST /kv_cache_events': (req, res) => this.#kvCacheEvents(req, res),
    'GET /server_info': (_req, res) => sendJsonText(res, 200, JSON.stringify(this.worker.serverInfo())),
    'GET /health': (_req, res) => sendText(res, this.worker.isUp() ? 200 : 503, '', 'text/plain'),
    'GET /perf_metrics': (_req, res) => sendJsonText(res, 200, this.#perf.drain(this.worker.config.blockSize)),
    'GET /prometheus/metrics': (_req, res) =>
      sendText(res, 200, prometheusText(this.worker, this.id), 'text/plain; version=0.0.4; charset=utf-8'),
  };

  #handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> | void {
    this.stats.httpRequests++;
    return dispatch(this.#routes, req, res, url);
  }

  async #kvCacheEvents(req: IncomingMessage, res: ServerResponse): Promise<void> {
    await readBody(req, 1024 * 1024);
    let events;
    try {
      events = this.worker.drainEvents();
    } catch (err) {
      if (err instanceof WorkerDownError) throw new HttpError(503, err.message);
      throw err;
    }
    this.stats.drainsServed++;
    this.stats.eventsServed += events.length;
    this.served.add(events);
    sendJsonText(res, 200, serializeKvEvents(events));
  }

  async #completion(endpoint: OpenAiEndpoint, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const arrivalS = performance.now() / 1000;
    const request = await this.#readRequest(endpoint, req);
    const ctxRequestId = ++this.#ctxRequestSeq;
    const requestId = `${endpoint === 'chat' ? 'chatcmpl' : 'cmpl'}-${this.id}-${ctxRequestId}`;
    const prompt = new ReleasablePrompt(request.tokens);
    const result = await new Promise<CtxResult>((resolve) => {
      this.worker.submit({ requestId, correlationId: request.conversationId, prompt }, resolve);
    });
    prompt.release();
    if (!result.ok) {
      res.destroy(); // the server went away mid-request (restart)
      return;
    }
    const nowS = performance.now() / 1000;
    const queuedS = (result.startedAt - result.arrivedAt) / this.#scheduler.speed / 1000;
    this.#perf.record({ ctxRequestId, result, arrivalS, scheduledS: arrivalS + queuedS, firstTokenS: nowS });
    this.#respond(request, res, requestId, ctxRequestId, result);
  }

  /**
   * The request as it waits in the queue: its ids, not its body. Read in a function of its own, which returns before
   * the wait (V8 keeps what an async function's registers hold until it returns); promptJson, a slice of the body's
   * text, would keep all of the text.
   */
  async #readRequest(endpoint: OpenAiEndpoint, req: IncomingMessage): Promise<OpenAiRequest> {
    const parsed = parseOpenAiRequestBytes(endpoint, await readBodyBytes(req), req.headers);
    const tokenizer = this.#options.tokenizer ?? null;
    return {
      ...parsed,
      promptJson: null,
      tokens: tokenizer === null ? parsed.tokens : await tokenizeWithModel(tokenizer, parsed),
    };
  }

  #respond(request: OpenAiRequest, res: ServerResponse, id: string, ctxRequestId: number, result: CtxResult): void {
    const completionTokens = request.contextOnly ? 1 : (request.maxTokens ?? 16);
    const usage: UsageNumbers = {
      promptTokens: result.promptTokens,
      completionTokens,
      cachedTokens: result.cachedTokens,
    };
    const head: ResponseHead = {
      endpoint: request.endpoint,
      id,
      created: Math.floor(Date.now() / 1000),
      model: request.model,
    };
    const text = fillerText(completionTokens);
    const disagg = request.contextOnly
      ? {
          request_type: 'context_only',
          first_gen_tokens: [request.tokens[request.tokens.length - 1] ?? 0],
          ctx_request_id: ctxRequestId,
          encoded_opaque_state: null,
          draft_tokens: null,
        }
      : null;
    if (!request.stream) {
      // context-only answers carry the worker's own ids (its tokenizer's, when it has the model's)
      const b64 = request.contextOnly && request.returnPromptTokenIdsB64 && request.endpoint === 'chat';
      sendJsonText(
        res,
        200,
        responseBody(
          head,
          text,
          usage,
          disagg,
          request.contextOnly && !b64 ? request.tokens : null,
          b64 ? promptTokenIdsB64Members(request.tokens) : '',
        ),
      );
      return;
    }
    startSse(res);
    sseData(res, chunkBody(head, text, null, null));
    sseData(res, chunkBody(head, '', 'length', usage));
    sseData(res, '[DONE]');
    res.end();
  }
}
