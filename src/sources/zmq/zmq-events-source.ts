// Subscribes to a worker's ZMQ KV-event stream (TensorRT-LLM streaming publisher, vLLM, SGLang) as one more SUB per
// rank — a PUB socket fans out to every subscriber, so kvsentinel steals nothing and never binds the publisher's
// address. Each rank's SUB is a ZmtpSubscriber (ZMTP over a Node socket, for speed: see its header), and its
// batches go through its RankPipeline (new lives, gaps, replay over a DEALER to the publisher's replay ROUTER,
// conversion into worker-events observations). Health: a ZMTP handshake with the publisher marks the source up;
// connect retries (nothing listens), a peer that is not a publisher, disconnects and a missed heartbeat mark it
// down; a handshake after a disconnect tells the pipeline the publisher may have restarted at the same address.
// Bad frames and payloads are counted (bad_input_total) and skipped; nothing here throws into the daemon.
import type { StreamEngine, StreamOrigin } from '../../core/stream/stream-engine.js';
import { decodeLiveMessage } from '../../core/stream/stream-frames.js';
import type { StreamEventConverter } from '../../core/stream/to-kv-events.js';
import type { VllmHashing } from '../../core/stream/vllm-hash-checker.js';
import type { Clock, Logger, ObservationSink, RunningSource, SourceReporter } from '../ports.js';
import { RankPipeline } from './rank-pipeline.js';
import { ReplayClient } from './replay-client.js';
import { streamConverter, streamOrigin } from './stream-origin.js';
import type { StreamRankCounters } from '../../core/observe/sidecar-stats.js';
import type { MutableRankCounters } from './stream-counters.js';
import { rankEndpoint } from './zmq-endpoints.js';
import { SocketBacklog } from './socket-backlog.js';
import { DEFAULT_ZMTP_OPTIONS, ZmtpSubscriber, type ZmtpSubscriberEvents } from './zmtp-subscriber.js';

export interface ZmqStreamSpec {
  /** the server id (the same as its relay's or --ctx's when the sidecar sees it there too) */
  readonly id: string;
  /** rank 0's PUB endpoint, tcp://HOST:PORT; rank r is at PORT + r */
  readonly endpoint: string;
  /** rank 0's replay ROUTER endpoint (rank r at PORT + r), or null */
  readonly replay: string | null;
  readonly engine: StreamEngine;
  /** attention-DP / data-parallel ranks, each its own publisher */
  readonly ranks: number;
  /** ZMQ subscription prefix ('' = everything) */
  readonly topic: string;
  /** vLLM: the workers' --prefix-caching-hash-algo and PYTHONHASHSEED, when stated (sha256_cbor is recomputed) */
  readonly vllmHashing?: VllmHashing;
  /** vLLM/SGLang: the slowest cache level a request reuses (0 GPU, the default; 1 CPU; 2 disk): `hit_tier` */
  readonly hitLevel?: number;
}

export interface ZmqSourceOptions {
  /** ZMQ receive high-water mark per rank socket: past it ZMQ drops messages, which show as seq gaps */
  readonly receiveHighWaterMark: number;
  /**
   * receive high-water mark of the replay socket: vLLM answers a replay with its whole buffer from the start seq in
   * one tight loop from a ROUTER (its high-water mark the default 1,000), which silently drops what the pipe to us
   * cannot hold, the end marker included. The pipe fills from the ZMQ I/O thread whatever our event loop is doing,
   * so a mark above the publisher's buffer (vLLM's buffer_steps, 10,000 by default) takes a whole replay, even from
   * a sidecar that is behind
   */
  readonly replayReceiveHighWaterMark: number;
  /** a replay that has not ended by then is abandoned (its missing batches count as lost) */
  readonly replayTimeoutMs: number;
  /** one rank's replay requests are at least this far apart: each costs the publisher's thread a loop over its buffer */
  readonly replayMinIntervalMs: number;
  /** live batches held while a replay runs */
  readonly maxHeldBatches: number;
  /** a publisher that heartbeats (vLLM snapshot mode) and is silent this long is reported down */
  readonly heartbeatTimeoutMs: number;
}

export const DEFAULT_ZMQ_OPTIONS: ZmqSourceOptions = {
  receiveHighWaterMark: 100_000,
  replayReceiveHighWaterMark: 100_000,
  replayTimeoutMs: 5_000,
  replayMinIntervalMs: 100,
  maxHeldBatches: 10_000,
  // vLLM sends an empty batch after each idle second; its example subscriber gives up after 5 s
  heartbeatTimeoutMs: 5_000,
};

const HEARTBEAT_CHECK_MS = 1_000;
/** the heartbeat check this much late: the event loop stalled (each rank's live stream may be stuck behind it) */
const STALL_MS = 500;
/** after a stall, a rank's receive loop found waiting with nothing taken this long is asked to catch up */
const CATCH_UP_LOOK_MS = 250;
/** ... for this many looks after the stall (10 s) */
const CATCH_UP_LOOKS = 40;

export interface ZmqSourceDeps {
  readonly sink: ObservationSink;
  readonly status: SourceReporter;
  readonly clock: Clock;
  readonly logger: Logger;
}

class RankStream {
  readonly pipeline: RankPipeline;
  readonly sub: ZmtpSubscriber;
  /** asks the publisher's replay ROUTER for what the stream missed; null without a replay endpoint */
  readonly replay: ReplayClient | null;
  /** a ZMTP handshake with the publisher succeeded and no disconnect followed */
  connected = false;
  /** the connection was lost since the last handshake: the next handshake is a reconnection */
  disconnected = false;
  readonly rank: number;
  readonly endpoint: string;
  readonly backlog = new SocketBacklog();
  /** looks left in the catch-up after a stall (see #catchUpAfterStall) */
  catchUpLooks = 0;

  constructor(
    rank: number,
    endpoint: string,
    replayEndpoint: string | null,
    options: ZmqSourceOptions,
    deps: { readonly logger: Logger; readonly name: string; readonly malformed: (code: string) => void },
    topic: string,
    pipeline: (r: RankStream) => RankPipeline,
    events: (r: RankStream) => ZmtpSubscriberEvents,
  ) {
    this.rank = rank;
    this.endpoint = endpoint;
    this.sub = new ZmtpSubscriber(
      endpoint,
      topic,
      { ...DEFAULT_ZMTP_OPTIONS, receiveHighWaterMark: options.receiveHighWaterMark },
      events(this),
    );
    this.replay =
      replayEndpoint === null
        ? null
        : new ReplayClient(
            replayEndpoint,
            {
              receiveHighWaterMark: options.replayReceiveHighWaterMark,
              timeoutMs: options.replayTimeoutMs,
              minIntervalMs: options.replayMinIntervalMs,
            },
            deps,
          );
    this.pipeline = pipeline(this);
    this.replay?.attach(this.pipeline);
    // nothing is queued until the first chunk arrives
    this.backlog.waiting = true;
  }

  get counters(): MutableRankCounters {
    return this.pipeline.counters;
  }
}

export class ZmqEventsSource implements RunningSource {
  readonly name: string;
  readonly spec: ZmqStreamSpec;
  readonly #deps: ZmqSourceDeps;
  readonly #options: ZmqSourceOptions;
  readonly #origin: StreamOrigin;
  readonly #converter: StreamEventConverter;
  readonly #ranks: RankStream[] = [];
  #heartbeat: NodeJS.Timeout | null = null;
  #started = false;
  #stopped = false;

  constructor(spec: ZmqStreamSpec, deps: ZmqSourceDeps, options: Partial<ZmqSourceOptions> = {}) {
    this.name = `zmq:${spec.id}`;
    this.spec = spec;
    this.#deps = deps;
    this.#options = { ...DEFAULT_ZMQ_OPTIONS, ...options };
    this.#origin = streamOrigin(spec.engine, spec.vllmHashing);
    this.#converter = streamConverter(spec.engine, spec.vllmHashing, spec.hitLevel);
  }

  /**
   * The health source of one rank: each rank is its own publisher, so one that never binds must not hide behind
   * the others' successes. `zmq:ID` without attention DP, `zmq:ID/rankR` with it.
   */
  rankSource(rank: number): string {
    return this.spec.ranks > 1 ? `${this.name}/rank${rank}` : this.name;
  }

  /** every health source name this stream reports under */
  get sourceNames(): string[] {
    return Array.from({ length: this.spec.ranks }, (_, r) => this.rankSource(r));
  }

  /** ranks whose publisher this source is connected to now */
  get connectedRanks(): number {
    return this.#ranks.filter((r) => r.connected).length;
  }

  counters(): StreamRankCounters[] {
    return this.#ranks.map((r) => ({ server: this.spec.id, rank: r.rank, ...r.counters }));
  }

  /** each rank's publisher-life id (vLLM snapshot mode), null until a batch carried one */
  publisherIds(): (string | null)[] {
    return this.#ranks.map((r) => r.pipeline.publisherId);
  }

  start(): Promise<void> {
    if (this.#started) return Promise.resolve();
    this.#started = true;
    for (let rank = 0; rank < this.spec.ranks; rank++) {
      const r = new RankStream(
        rank,
        rankEndpoint(this.spec.endpoint, rank),
        this.spec.replay === null ? null : rankEndpoint(this.spec.replay, rank),
        this.#options,
        {
          logger: this.#deps.logger,
          name: `${this.name} rank ${rank}`,
          malformed: (code) => this.#malformed(rank, code),
        },
        this.spec.topic,
        (stream) => this.#pipeline(stream),
        (stream) => this.#events(stream),
      );
      this.#ranks.push(r);
      r.sub.connect();
      this.#deps.sink.apply({
        kind: 'stream-sequence',
        ts: this.#deps.clock(),
        server: this.spec.id,
        rank,
        change: 'subscribed',
        lost: 0,
        filled: 0,
      });
    }
    let lastCheck = Date.now();
    this.#heartbeat = setInterval(() => {
      const now = this.#deps.clock();
      const stalled = Date.now() - lastCheck - HEARTBEAT_CHECK_MS >= STALL_MS;
      lastCheck = Date.now();
      for (const r of this.#ranks) {
        if (stalled && r.replay !== null) this.#catchUpAfterStall(r);
        r.pipeline.checkHeartbeat(now, this.#options.heartbeatTimeoutMs);
        if (!r.sub.closed) r.backlog.idleLook(this.#deps.clock);
      }
    }, HEARTBEAT_CHECK_MS);
    this.#heartbeat.unref();
    return Promise.resolve();
  }

  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    if (this.#heartbeat !== null) clearInterval(this.#heartbeat);
    for (const r of this.#ranks) r.sub.close();
    await Promise.allSettled(this.#ranks.flatMap((r) => (r.replay === null ? [] : [r.replay.close()])));
  }

  #pipeline(r: RankStream): RankPipeline {
    const ranks = this.spec.ranks;
    return new RankPipeline({
      server: this.spec.id,
      rank: r.rank,
      source: this.rankSource(r.rank),
      name: `${this.name} rank ${r.rank}`,
      sink: this.#deps.sink,
      status: this.#deps.status,
      clock: this.#deps.clock,
      logger: this.#deps.logger,
      converter: this.#converter,
      origin: this.#origin,
      // a worker without attention DP: its events say no rank (as on the pull path), whatever the batch states
      statedRank: (batchRank) => (ranks > 1 ? r.rank : batchRank !== null && batchRank > 0 ? batchRank : null),
      replay: r.replay === null ? null : (fromSeq) => r.replay?.request(fromSeq),
      maxHeldBatches: this.#options.maxHeldBatches,
      backlog: r.backlog,
      silenceIsDown: true,
    });
  }

  /**
   * The event loop stalled long enough to close the rank's TCP window: the publisher's kernel may hold the live
   * stream back for seconds after the sidecar reads again (its zero-window probe backs off), while vLLM's replay
   * buffer rolls on, and what the publisher dropped meanwhile shows only at its next batch. A receive loop found
   * waiting with nothing taken since the last look asks the replay endpoint for what follows the last batch, over a
   * connection of its own: once when it first goes quiet, and again each time the stream moved and went quiet again.
   */
  #catchUpAfterStall(r: RankStream): void {
    const chained = r.catchUpLooks > 0;
    r.catchUpLooks = CATCH_UP_LOOKS;
    if (chained) return;
    let taken = r.backlog.messages;
    let askedAt = -1;
    const look = (): void => {
      if (this.#stopped || r.sub.closed) return;
      const messages = r.backlog.messages;
      if (r.backlog.waiting && messages === taken && messages !== askedAt) {
        r.pipeline.catchUp();
        askedAt = messages;
      }
      taken = messages;
      if (--r.catchUpLooks > 0) setTimeout(look, CATCH_UP_LOOK_MS).unref();
    };
    setTimeout(look, CATCH_UP_LOOK_MS).unref();
  }

  #events(r: RankStream): ZmtpSubscriberEvents {
    const source = this.rankSource(r.rank);
    const where = `${this.spec.id} rank ${r.rank} (${r.endpoint})`;
    return {
      handshake: () => {
        r.connected = true;
        this.#deps.status.ok(source);
        // after a disconnect the publisher may be a new life (restarted at the same address): the next batch decides
        if (r.disconnected) r.pipeline.reconnected();
        r.disconnected = false;
        // what the publisher sent before our subscription took effect: ask for its buffer
        r.pipeline.history();
      },
      retry: (reason) =>
        this.#deps.status.fail(
          source,
          'connect',
          reason === 'ECONNREFUSED' || reason === 'ENOENT'
            ? `${where}: nothing accepts connections (publisher not bound? under attention DP some builds publish from rank 0 only)`
            : `${where}: cannot connect (${reason})`,
        ),
      disconnect: () => {
        r.connected = false;
        r.disconnected = true;
        this.#deps.status.fail(source, 'connect', `${where}: the publisher disconnected`);
      },
      refused: (reason) => this.#deps.status.fail(source, 'connect', `${where}: not a ZMQ publisher: ${reason}`),
      message: (frames) => {
        r.backlog.waiting = false;
        r.backlog.taken(this.#deps.clock, r.sub);
        const message = decodeLiveMessage(frames);
        if (!message.ok) return this.#malformed(r.rank, message.issue.code);
        r.pipeline.live(message.value.seq, message.value.publisherId, message.value.payload);
      },
      idle: () => {
        r.backlog.waiting = true;
      },
      failed: (err) => this.#deps.logger.error(`${this.name} rank ${r.rank}: a batch failed`, { error: String(err) }),
    };
  }

  #malformed(rank: number, code: string): void {
    const r = this.#ranks[rank];
    if (r !== undefined) r.counters.malformed++;
    this.#deps.status.badInput(this.rankSource(rank), code);
  }
}
