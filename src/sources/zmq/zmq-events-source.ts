// Subscribes to a worker's ZMQ KV-event stream (TensorRT-LLM streaming publisher, vLLM, SGLang) as one more SUB per
// rank — a PUB socket fans out to every subscriber, so kvsentinel steals nothing and never binds the publisher's
// address. Each rank's batches go through its StreamSequencer (gaps, restarts, replay over a DEALER to the
// publisher's replay ROUTER), then are decoded and converted into worker-events observations. Health: a ZMTP
// handshake with the publisher marks the source up; connect retries (nothing listens) and disconnects mark it down.
// Bad frames and payloads are counted (bad_input_total) and skipped; nothing here throws into the daemon.
import { Dealer, Subscriber } from 'zeromq';
import { decodeStreamBatch } from '../../core/stream/decode-batch.js';
import { streamHashes, type StreamEngine, type StreamOrigin } from '../../core/stream/stream-engine.js';
import { decodeLiveMessage, decodeReplayMessage, replayRequest } from '../../core/stream/stream-frames.js';
import { StreamSequencer, type SequencerAction } from '../../core/stream/stream-sequencer.js';
import { StreamEventConverter } from '../../core/stream/to-kv-events.js';
import type { VllmHashing } from '../../core/stream/vllm-hash-checker.js';
import type { Clock, Logger, ObservationSink, RunningSource, SourceReporter } from '../ports.js';
import { emptyRankCounters, type MutableRankCounters, type StreamRankCounters } from './stream-counters.js';
import { rankEndpoint } from './zmq-endpoints.js';

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
  /** a replay that has not ended by then is abandoned (its missing batches count as lost) */
  readonly replayTimeoutMs: number;
  /** live batches held while a replay runs */
  readonly maxHeldBatches: number;
}

export const DEFAULT_ZMQ_OPTIONS: ZmqSourceOptions = {
  receiveHighWaterMark: 100_000,
  replayTimeoutMs: 5_000,
  maxHeldBatches: 10_000,
};

export interface ZmqSourceDeps {
  readonly sink: ObservationSink;
  readonly status: SourceReporter;
  readonly clock: Clock;
  readonly logger: Logger;
}

class RankStream {
  readonly counters: MutableRankCounters = emptyRankCounters();
  readonly sequencer: StreamSequencer<Uint8Array>;
  readonly sub: Subscriber;
  dealer: Dealer | null = null;
  replayTimer: NodeJS.Timeout | null = null;
  /** bumps per replay so a late reply of an abandoned one is recognised */
  replayGeneration = 0;
  /** ends the replay in flight (its end marker, its timeout or a failed request) */
  currentEnd: (() => void) | null = null;
  /** a ZMTP handshake with the publisher succeeded and no disconnect followed */
  connected = false;
  readonly rank: number;
  readonly endpoint: string;
  readonly replayEndpoint: string | null;

  constructor(rank: number, endpoint: string, replayEndpoint: string | null, options: ZmqSourceOptions) {
    this.rank = rank;
    this.endpoint = endpoint;
    this.replayEndpoint = replayEndpoint;
    this.sequencer = new StreamSequencer({ replay: replayEndpoint !== null, maxHeld: options.maxHeldBatches });
    this.sub = new Subscriber({ receiveHighWaterMark: options.receiveHighWaterMark, linger: 0 });
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
  readonly #loops: Promise<void>[] = [];
  #started = false;
  #stopped = false;

  constructor(spec: ZmqStreamSpec, deps: ZmqSourceDeps, options: Partial<ZmqSourceOptions> = {}) {
    this.name = `zmq:${spec.id}`;
    this.spec = spec;
    this.#deps = deps;
    this.#options = { ...DEFAULT_ZMQ_OPTIONS, ...options };
    const hashing = spec.engine === 'vllm' ? (spec.vllmHashing ?? { algo: null, seed: null }) : null;
    this.#origin = {
      engine: spec.engine,
      hashes: streamHashes(spec.engine),
      ...(hashing !== null ? { vllmHashing: { algo: hashing.algo, seedKnown: hashing.seed !== null } } : {}),
    };
    this.#converter = new StreamEventConverter(spec.engine, {
      ...(hashing !== null ? { vllmHashing: hashing } : {}),
      ...(spec.hitLevel !== undefined ? { hitLevel: spec.hitLevel } : {}),
    });
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

  start(): Promise<void> {
    if (this.#started) return Promise.resolve();
    this.#started = true;
    for (let rank = 0; rank < this.spec.ranks; rank++) {
      const r = new RankStream(
        rank,
        rankEndpoint(this.spec.endpoint, rank),
        this.spec.replay === null ? null : rankEndpoint(this.spec.replay, rank),
        this.#options,
      );
      this.#ranks.push(r);
      this.#watch(r);
      r.sub.connect(r.endpoint);
      r.sub.subscribe(this.spec.topic);
      this.#deps.sink.apply({
        kind: 'stream-sequence',
        ts: this.#deps.clock(),
        server: this.spec.id,
        rank,
        change: 'subscribed',
        lost: 0,
        filled: 0,
      });
      this.#loops.push(this.#receive(r));
    }
    return Promise.resolve();
  }

  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    for (const r of this.#ranks) {
      if (r.replayTimer !== null) clearTimeout(r.replayTimer);
      r.sub.close();
      r.dealer?.close();
    }
    await Promise.allSettled(this.#loops);
  }

  #watch(r: RankStream): void {
    const source = this.rankSource(r.rank);
    const where = `${this.spec.id} rank ${r.rank} (${r.endpoint})`;
    r.sub.events.on('handshake', () => {
      r.connected = true;
      this.#deps.status.ok(source);
      // what the publisher sent before our subscription took effect: ask for its buffer
      this.#run(r, r.sequencer.history());
    });
    r.sub.events.on('connect:retry', () =>
      this.#deps.status.fail(
        source,
        'connect',
        `${where}: nothing accepts connections (publisher not bound? under attention DP some builds publish from rank 0 only)`,
      ),
    );
    r.sub.events.on('disconnect', () => {
      r.connected = false;
      this.#deps.status.fail(source, 'connect', `${where}: the publisher disconnected`);
    });
    r.sub.events.on('handshake:error:protocol', () =>
      this.#deps.status.fail(source, 'connect', `${where}: not a ZMQ publisher (protocol error)`),
    );
    r.sub.events.on('handshake:error:other', () =>
      this.#deps.status.fail(source, 'connect', `${where}: ZMQ handshake failed`),
    );
  }

  async #receive(r: RankStream): Promise<void> {
    try {
      for await (const frames of r.sub) {
        if (this.#stopped) return;
        const message = decodeLiveMessage(frames);
        if (!message.ok) {
          this.#malformed(r, message.issue.code);
          continue;
        }
        this.#run(r, r.sequencer.live(message.value.seq, message.value.payload));
      }
    } catch (err) {
      if (!this.#stopped)
        this.#deps.logger.error(`${this.name} rank ${r.rank}: receive failed`, { error: String(err) });
    }
  }

  #run(r: RankStream, actions: readonly SequencerAction<Uint8Array>[]): void {
    for (const a of actions) {
      switch (a.type) {
        case 'deliver':
          this.#deliver(r, a.seq, a.item, a.replayed);
          break;
        case 'replay':
          this.#replay(r, a.fromSeq);
          break;
        case 'gap':
          this.#gap(r, a.lost, a.filled, a.history);
          break;
        case 'reset':
          r.counters.resets++;
          this.#converter.resetRank(r.rank);
          this.#deps.logger.warn(
            `${this.name} rank ${r.rank}: seq went back ${a.fromSeq} -> ${a.toSeq}: the publisher restarted; its table starts over`,
            { server: this.spec.id },
          );
          this.#deps.sink.apply({
            kind: 'stream-sequence',
            ts: this.#deps.clock(),
            server: this.spec.id,
            rank: r.rank,
            change: 'reset',
            lost: 0,
            filled: 0,
          });
          break;
      }
    }
  }

  #deliver(r: RankStream, seq: bigint, payload: Uint8Array, replayed: boolean): void {
    r.counters.batches++;
    if (replayed) r.counters.replayedBatches++;
    const decoded = decodeStreamBatch(payload);
    for (const i of decoded.issues) this.#deps.status.badInput(this.rankSource(r.rank), i.code);
    if (decoded.batch === null) {
      r.counters.malformed++;
      if (r.counters.malformed <= 3)
        this.#deps.logger.warn(
          `${this.name} rank ${r.rank}: batch seq ${seq} skipped: ${decoded.issues[0]?.message ?? 'unreadable'}`,
        );
      return;
    }
    this.#deps.status.ok(this.rankSource(r.rank));
    // a worker without attention DP: its events say no rank (as on the pull path), whatever the batch states
    const stated =
      this.spec.ranks > 1 ? r.rank : decoded.batch.rank !== null && decoded.batch.rank > 0 ? decoded.batch.rank : null;
    const converted = this.#converter.convert(decoded.batch, r.rank, stated, `seq ${seq}`);
    for (const i of converted.issues) this.#deps.status.badInput(this.rankSource(r.rank), i.code);
    r.counters.unresolvedBlocks += converted.unresolvedBlocks;
    r.counters.unmatchedRemovals += converted.unknownRemovals;
    if (converted.events.length === 0) return;
    this.#deps.sink.apply({
      kind: 'worker-events',
      ts: this.#deps.clock(),
      server: this.spec.id,
      firstSeq: 0,
      events: converted.events,
      stream: this.#origin,
      ...(converted.engineChecks !== null ? { engineChecks: converted.engineChecks } : {}),
    });
  }

  #malformed(r: RankStream, code: string): void {
    r.counters.malformed++;
    this.#deps.status.badInput(this.rankSource(r.rank), code);
  }

  #gap(r: RankStream, lost: number, filled: number, history: boolean): void {
    if (history) {
      if (lost > 0)
        this.#deps.logger.info(
          `${this.name} rank ${r.rank}: subscribed mid-stream; ${lost} earlier batches were not replayable`,
        );
      return;
    }
    if (lost > 0) {
      r.counters.gaps++;
      r.counters.lostBatches += lost;
      this.#deps.logger.warn(
        `${this.name} rank ${r.rank}: ${lost} batches lost in a seq gap${filled > 0 ? ` (${filled} replayed)` : ''}`,
        { server: this.spec.id },
      );
    }
    this.#deps.sink.apply({
      kind: 'stream-sequence',
      ts: this.#deps.clock(),
      server: this.spec.id,
      rank: r.rank,
      change: 'gap',
      lost,
      filled,
    });
  }

  #replay(r: RankStream, fromSeq: bigint): void {
    const endpoint = r.replayEndpoint;
    if (endpoint === null || this.#stopped) {
      this.#run(r, r.sequencer.replayEnded());
      return;
    }
    r.counters.replayRequests++;
    const generation = ++r.replayGeneration;
    if (r.dealer === null) {
      r.dealer = new Dealer({ linger: 0 });
      r.dealer.connect(endpoint);
      this.#loops.push(this.#receiveReplies(r, r.dealer));
    }
    const end = (): void => {
      if (r.replayGeneration !== generation || !r.sequencer.replaying) return;
      if (r.replayTimer !== null) clearTimeout(r.replayTimer);
      r.replayTimer = null;
      this.#run(r, r.sequencer.replayEnded());
    };
    r.replayTimer = setTimeout(() => {
      this.#deps.logger.warn(
        `${this.name} rank ${r.rank}: replay from seq ${fromSeq} did not end within ${this.#options.replayTimeoutMs} ms (${endpoint})`,
      );
      // a late answer must not end a later replay: start over with a fresh socket
      r.dealer?.close();
      r.dealer = null;
      end();
    }, this.#options.replayTimeoutMs);
    r.replayTimer.unref();
    r.dealer.send(replayRequest(fromSeq)).catch((err: unknown) => {
      this.#deps.logger.warn(`${this.name} rank ${r.rank}: replay request failed: ${String(err)}`);
      end();
    });
    r.currentEnd = end;
  }

  async #receiveReplies(r: RankStream, dealer: Dealer): Promise<void> {
    try {
      for await (const frames of dealer) {
        if (this.#stopped || r.dealer !== dealer) return;
        const reply = decodeReplayMessage(frames);
        if (!reply.ok) {
          this.#malformed(r, reply.issue.code);
          continue;
        }
        if (reply.value === null) r.currentEnd?.();
        else this.#run(r, r.sequencer.replayed(reply.value.seq, reply.value.payload));
      }
    } catch (err) {
      if (!this.#stopped && r.dealer === dealer)
        this.#deps.logger.warn(`${this.name} rank ${r.rank}: replay socket failed: ${String(err)}`);
    }
  }
}
