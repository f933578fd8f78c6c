// A TensorRT-LLM CTX (context/prefill) worker: attention-DP ranks each with its own KV cache and event
// counter, a bounded number of concurrent prefills per server (the rest wait FIFO), rank assignment inside the
// server, prefill time = fixed overhead + uncached tokens / throughput, and the destructive event queue.
import { KvsentinelError } from '../core/errors.js';
import type { HashAlgo, KvEvent } from '../core/wire/kv-event.js';
import { WorkerEventQueue } from './event-queue.js';
import { RankCache } from './kv-cache.js';
import type { Prompt } from './prompt.js';
import type { Scheduler } from './scheduler.js';

export const RANK_ASSIGNMENTS = ['affinity', 'least_loaded'] as const;
export type RankAssignment = (typeof RANK_ASSIGNMENTS)[number];

export interface CtxWorkerConfig {
  readonly id: string;
  /** attention-DP size */
  readonly ranks: number;
  /** worker tokens_per_block */
  readonly blockSize: number;
  readonly gpuBlocksPerRank: number;
  readonly hostBlocksPerRank: number;
  /** prefills running at once on the server; the rest queue */
  readonly maxConcurrency: number;
  /** prefill throughput of one running request, tokens per second */
  readonly prefillTokensPerSecond: number;
  readonly overheadMs: number;
  readonly rankAssignment: RankAssignment;
  /** effective kv_cache_event_hash_algo (what /server_info reports) */
  readonly hashAlgo: HashAlgo;
  readonly eventBufferMaxSize: number;
  readonly kvEventsPush: boolean;
  /** the push path has a publisher (live ZMQ): build events for it although the pull path stays empty */
  readonly publishEvents?: boolean;
  readonly adpGatherDrop: boolean;
  readonly gatherPeriodMs: number;
  /** fault: from this time on a pump takes every event as it is queued; null/absent = never */
  readonly competitorPumpFromMs?: number | null;
  readonly windowSize: number;
  /** how long a restart keeps the server down */
  readonly restartDowntimeMs: number;
}

export interface CtxRequest {
  readonly requestId: string;
  readonly correlationId: string | null;
  readonly prompt: Prompt;
}

export interface CtxResult {
  readonly requestId: string;
  readonly ok: boolean;
  readonly error: string | null;
  readonly promptTokens: number;
  /** reused prompt tokens (whole blocks), usage.prompt_tokens_details.cached_tokens */
  readonly cachedTokens: number;
  readonly rank: number;
  readonly arrivedAt: number;
  readonly startedAt: number;
  readonly finishedAt: number;
}

/** /server_info of a newer worker */
export interface ServerInfo {
  readonly disaggregated_params: { readonly disaggregated_mode: string };
  readonly kv_cache_hash_algo: HashAlgo;
  readonly tokens_per_block: number;
}

export class WorkerDownError extends KvsentinelError {
  override readonly name = 'WorkerDownError';

  constructor(message: string) {
    super('sim-worker-down', message);
  }
}

interface Queued {
  readonly request: CtxRequest;
  readonly done: (result: CtxResult) => void;
  readonly arrivedAt: number;
}

export interface CtxWorkerStats {
  requests: number;
  failed: number;
  promptTokens: number;
  cachedTokens: number;
  restarts: number;
}

export class CtxWorker {
  readonly config: CtxWorkerConfig;
  readonly events: WorkerEventQueue;
  readonly stats: CtxWorkerStats = { requests: 0, failed: 0, promptTokens: 0, cachedTokens: 0, restarts: 0 };
  readonly #scheduler: Scheduler;
  readonly #caches: RankCache[];
  readonly #rankActive: number[];
  readonly #queue: Queued[] = [];
  #queueHead = 0;
  readonly #running = new Set<Queued>();
  #epoch = 0;
  #upAt = 0;
  #pausedUntil = 0;

  constructor(scheduler: Scheduler, config: CtxWorkerConfig) {
    this.config = config;
    this.#scheduler = scheduler;
    this.events = new WorkerEventQueue({
      ranks: config.ranks,
      bufferMaxSize: config.eventBufferMaxSize,
      push: config.kvEventsPush,
      adpGatherDrop: config.adpGatherDrop,
      gatherDelayMs: config.gatherPeriodMs,
      windowSize: config.windowSize,
      pumpFromMs: config.competitorPumpFromMs ?? null,
    });
    const wantEvents = this.events.pullEnabled || (config.publishEvents === true && config.eventBufferMaxSize > 0);
    this.#caches = Array.from(
      { length: config.ranks },
      (_, rank) =>
        new RankCache({
          gpuBlocks: config.gpuBlocksPerRank,
          hostBlocks: config.hostBlocksPerRank,
          emit: wantEvents ? (data) => this.events.emit(rank, data, this.#scheduler.now()) : null,
        }),
    );
    this.#rankActive = new Array<number>(config.ranks).fill(0);
    this.#emitCreated();
  }

  get id(): string {
    return this.config.id;
  }

  /** requests queued or running on the server */
  get inflight(): number {
    return this.#queue.length - this.#queueHead + this.#running.size;
  }

  get running(): number {
    return this.#running.size;
  }

  isUp(): boolean {
    return this.#scheduler.now() >= this.#upAt;
  }

  rankCache(rank: number): RankCache {
    return this.#caches[rank]!;
  }

  serverInfo(): ServerInfo {
    return {
      disaggregated_params: { disaggregated_mode: 'context_only' },
      kv_cache_hash_algo: this.config.hashAlgo,
      tokens_per_block: this.config.blockSize,
    };
  }

  /** POST /kv_cache_events: destructive; throws WorkerDownError while the server restarts */
  drainEvents(): KvEvent[] {
    if (!this.isUp()) throw new WorkerDownError(`Cannot connect to host ${this.config.id} [Connect call failed]`);
    return this.events.drain(this.#scheduler.now());
  }

  /** a context_only request; `done` runs when the prefill finishes (or fails) */
  submit(request: CtxRequest, done: (result: CtxResult) => void): void {
    const now = this.#scheduler.now();
    if (!this.isUp()) {
      // connection refused while the server restarts
      this.stats.failed++;
      this.#scheduler.at(now, () => done(this.#failure(request, now, now, 'Cannot connect to host')));
      return;
    }
    this.#queue.push({ request, done, arrivedAt: now });
    this.#pump();
  }

  #failure(request: CtxRequest, arrivedAt: number, now: number, error: string): CtxResult {
    return {
      requestId: request.requestId,
      ok: false,
      error,
      promptTokens: request.prompt.tokens.length,
      cachedTokens: 0,
      rank: -1,
      arrivedAt,
      startedAt: now,
      finishedAt: now,
    };
  }

  /**
   * no new prefill starts for `durationMs` (KV-transfer backpressure from GEN, a hiccup): requests keep
   * arriving and queue; the server still answers /kv_cache_events
   */
  stall(durationMs: number): void {
    const until = this.#scheduler.now() + durationMs;
    if (until <= this.#pausedUntil) return;
    this.#pausedUntil = until;
    this.#scheduler.at(until, () => this.#pump());
  }

  /** crash and come back after restartDowntimeMs: caches and event ids start over; in-flight requests fail */
  restart(): void {
    const now = this.#scheduler.now();
    this.#epoch++;
    this.stats.restarts++;
    const victims = [...this.#running, ...this.#queue.slice(this.#queueHead)];
    this.#running.clear();
    this.#queue.length = 0;
    this.#queueHead = 0;
    this.#rankActive.fill(0);
    for (const cache of this.#caches) cache.clear();
    this.events.reset();
    this.#upAt = now + this.config.restartDowntimeMs;
    const epoch = this.#epoch;
    this.#scheduler.at(this.#upAt, () => {
      if (epoch !== this.#epoch) return;
      this.#emitCreated();
      this.#pump();
    });
    for (const victim of victims) {
      this.stats.failed++;
      victim.done(this.#failure(victim.request, victim.arrivedAt, now, 'Server disconnected'));
    }
  }

  #emitCreated(): void {
    const now = this.#scheduler.now();
    for (let rank = 0; rank < this.config.ranks; rank++) {
      this.events.emit(
        rank,
        { type: 'created', numBlocksPerCacheLevel: [this.config.gpuBlocksPerRank, this.config.hostBlocksPerRank] },
        now,
      );
    }
  }

  /** [rank, leading full blocks cached on it] */
  #chooseRank(prompt: Prompt): [number, number] {
    const ranks = this.config.ranks;
    let best = 0;
    if (this.config.rankAssignment === 'least_loaded') {
      for (let r = 1; r < ranks; r++) if (this.#rankActive[r]! < this.#rankActive[best]!) best = r;
      return [best, this.#caches[best]!.match(prompt.blocks(this.config.blockSize, this.config.hashAlgo))];
    }
    // affinity: the rank holding the longest prefix; ties → the least loaded, then the lowest rank
    const blocks = prompt.blocks(this.config.blockSize, this.config.hashAlgo);
    let bestMatch = -1;
    for (let r = 0; r < ranks; r++) {
      const match = this.#caches[r]!.match(blocks);
      if (match > bestMatch || (match === bestMatch && this.#rankActive[r]! < this.#rankActive[best]!)) {
        best = r;
        bestMatch = match;
      }
    }
    return [best, bestMatch];
  }

  #pump(): void {
    if (!this.isUp() || this.#scheduler.now() < this.#pausedUntil) return;
    while (this.#running.size < this.config.maxConcurrency && this.#queueHead < this.#queue.length) {
      const item = this.#queue[this.#queueHead]!;
      this.#queueHead++;
      if (this.#queueHead > 1024 && this.#queueHead * 2 > this.#queue.length) {
        this.#queue.splice(0, this.#queueHead);
        this.#queueHead = 0;
      }
      this.#start(item);
    }
  }

  #start(item: Queued): void {
    const now = this.#scheduler.now();
    const prompt = item.request.prompt;
    const [rank, reused] = this.#chooseRank(prompt);
    const blocks = prompt.blocks(this.config.blockSize, this.config.hashAlgo);
    const cache = this.#caches[rank]!;
    const promptTokens = prompt.tokens.length;
    const cachedTokens = reused * this.config.blockSize;
    const duration =
      this.config.overheadMs + ((promptTokens - cachedTokens) * 1000) / this.config.prefillTokensPerSecond;
    this.#running.add(item);
    this.#rankActive[rank]!++;
    const epoch = this.#epoch;
    this.#scheduler.at(now + duration, () => {
      if (epoch !== this.#epoch) return; // the restart already failed it
      this.#running.delete(item);
      this.#rankActive[rank]!--;
      cache.serve(blocks, prompt.tokens);
      this.stats.requests++;
      this.stats.promptTokens += promptTokens;
      this.stats.cachedTokens += cachedTokens;
      const finishedAt = this.#scheduler.now();
      this.#pump();
      item.done({
        requestId: item.request.requestId,
        ok: true,
        error: null,
        promptTokens,
        cachedTokens,
        rank,
        arrivedAt: item.arrivedAt,
        startedAt: now,
        finishedAt,
      });
    });
  }
}
