// One publisher's stream (a server's rank) from frames to observations, whatever socket brought them (a SUB that
// connects to the rank's PUB, or one bound SUB that publishers connect to): decodes each batch on arrival, tells a
// new publisher life by vLLM's publisher id (snapshot mode) or a reconnection the sequencer could not match to the
// old life, runs its StreamSequencer (gaps, restarts, replay), and turns the delivered batches into worker-events.
// It reports what the sequence shows as stream-sequence observations: gaps, resets, and history this subscriber
// joined too late to replay. With a publisher id the publisher heartbeats (an empty batch each idle second): a rank
// silent for longer is reported down, since its last batch may have been lost with nothing after it to show it.
import { decodeStreamBatch, type StreamBatchDecode } from '../../core/stream/decode-batch.js';
import type { StreamOrigin } from '../../core/stream/stream-engine.js';
import { StreamSequencer, type LifeChange, type SequencerAction } from '../../core/stream/stream-sequencer.js';
import type { StreamEventConverter } from '../../core/stream/to-kv-events.js';
import type { Clock, Logger, ObservationSink, SourceReporter } from '../ports.js';
import type { SocketBacklog } from './socket-backlog.js';
import { emptyRankCounters, type MutableRankCounters } from './stream-counters.js';

/** A batch as it arrived, decoded once. */
export interface Arrival {
  readonly payload: Uint8Array;
  readonly decoded: StreamBatchDecode;
}

export interface RankPipelineDeps {
  readonly server: string;
  readonly rank: number;
  /** the health source this rank reports under */
  readonly source: string;
  /** for log lines: `zmq:ID rank R` */
  readonly name: string;
  readonly sink: ObservationSink;
  readonly status: SourceReporter;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly converter: StreamEventConverter;
  readonly origin: StreamOrigin;
  /** the rank the events state (null: a worker without attention DP) */
  readonly statedRank: (batchRank: number | null) => number | null;
  /** asks the rank's replay ROUTER for batches from a seq; null: no replay endpoint */
  readonly replay: ((fromSeq: bigint) => void) | null;
  readonly maxHeldBatches: number;
  /** the backlog of the socket this rank's batches arrive on: a gap while it is behind is the sidecar's own loss */
  readonly backlog?: SocketBacklog;
  /**
   * a silent heartbeat marks the source down (a subscription to a known worker); false on a bound socket, where a
   * pod that stopped publishing was more likely scaled down than hung: it is logged, not an unreachable source
   */
  readonly silenceIsDown: boolean;
}

const LIFE_CAUSE: Record<LifeChange, string> = {
  'seq-back': 'the seq went back',
  'publisher-id': "the publisher's id changed",
  'reconnect-replay-differs': "after a reconnection the publisher's buffer no longer holds the last batch seen",
  'reconnect-unverifiable': 'after a reconnection the seq jumped and nothing shows the old life went on',
};

const equalBytes = (x: Uint8Array, y: Uint8Array): boolean => {
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
};

const sameBytes = (a: Arrival, b: Arrival): boolean => equalBytes(a.payload, b.payload);

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

export class RankPipeline {
  readonly counters: MutableRankCounters = emptyRankCounters();
  readonly sequencer: StreamSequencer<Arrival>;
  readonly #d: RankPipelineDeps;
  /**
   * the publisher life's id, once a batch carried one: kept as bytes and compared as bytes, since a snapshot-mode
   * publisher sends it with every batch (its hex is made only when read)
   */
  #publisherId: Uint8Array | null = null;
  /** when the last message (batch or heartbeat) arrived, for the heartbeat check */
  lastHeard: number | null = null;
  /** the rank missed its heartbeat and was reported down */
  silent = false;

  constructor(deps: RankPipelineDeps) {
    this.#d = deps;
    this.sequencer = new StreamSequencer<Arrival>({
      replay: deps.replay !== null,
      maxHeld: deps.maxHeldBatches,
      same: sameBytes,
    });
  }

  get publisherId(): string | null {
    return this.#publisherId === null ? null : hex(this.#publisherId);
  }

  /** A live message; `frameId` is the publisher id its sequence frame carried (vLLM's first snapshot build). */
  live(seq: bigint, frameId: Uint8Array | null, payload: Uint8Array): void {
    const arrival: Arrival = { payload, decoded: decodeStreamBatch(payload) };
    this.lastHeard = this.#d.clock();
    if (this.silent) {
      this.silent = false;
      if (this.#d.silenceIsDown) this.#d.status.ok(this.#d.source);
    }
    const id = frameId ?? arrival.decoded.batch?.publisherId ?? null;
    if (id !== null && this.#publisherId !== null && !equalBytes(id, this.#publisherId)) {
      this.#publisherId = id.slice();
      this.run(this.sequencer.restart(seq, arrival));
      return;
    }
    if (id !== null) {
      this.#publisherId ??= id.slice();
      // the id says the life went on, whatever a reconnection suggested
      this.sequencer.sameLife();
    }
    this.run(this.sequencer.live(seq, arrival));
  }

  replayed(seq: bigint, payload: Uint8Array): void {
    if (this.sequencer.skipsReply(seq)) return;
    this.run(this.sequencer.replayed(seq, { payload, decoded: decodeStreamBatch(payload) }));
  }

  replayEnded(): void {
    this.run(this.sequencer.replayEnded());
  }

  /** What the publisher buffered before this subscription took effect (a no-op once a batch was heard). */
  history(): void {
    this.run(this.sequencer.history());
  }

  /** After the sidecar stalled: what the live stream has not brought yet, asked of the replay endpoint. */
  catchUp(): void {
    this.run(this.sequencer.catchUp());
  }

  /** The connection was made again after a disconnect: the next batch decides whether the publisher restarted. */
  reconnected(): void {
    this.sequencer.reconnected();
  }

  /** A publisher with an id heartbeats: silent longer than `ms` means down (its last batch may be lost). */
  checkHeartbeat(now: number, ms: number): void {
    if (this.#publisherId === null || this.lastHeard === null || this.silent) return;
    if (now - this.lastHeard <= ms) return;
    this.silent = true;
    const message = `${this.#d.name}: no batch or heartbeat for ${Math.round((now - this.lastHeard) / 1000)} s (vLLM snapshot mode sends one each idle second): the publisher stopped, or its messages are lost`;
    if (this.#d.silenceIsDown) this.#d.status.fail(this.#d.source, 'timeout', message);
    else this.#d.logger.warn(message, { server: this.#d.server });
  }

  run(actions: readonly SequencerAction<Arrival>[]): void {
    for (const a of actions) {
      switch (a.type) {
        case 'deliver':
          this.#deliver(a.seq, a.item, a.replayed);
          break;
        case 'replay':
          if (this.#d.replay === null) this.run(this.sequencer.replayEnded());
          else {
            this.counters.replayRequests++;
            this.#d.replay(a.fromSeq);
          }
          break;
        case 'gap':
          this.#gap(a.lost, a.filled, a.history);
          break;
        case 'reset':
          this.#reset(a.fromSeq, a.toSeq, a.cause);
          break;
      }
    }
  }

  #observe(change: 'gap' | 'reset' | 'history-incomplete', lost: number, filled: number): void {
    const d = this.#d;
    const ts = d.clock();
    // a loss is the sidecar's when its own queue was behind: that may take the queue a moment longer to say
    if (change === 'gap' && lost > 0 && d.backlog !== undefined)
      d.backlog.whenKnown(ts, (behind) => this.#emit(ts, change, lost, filled, behind));
    else this.#emit(ts, change, lost, filled, null);
  }

  #emit(
    ts: number,
    change: 'gap' | 'reset' | 'history-incomplete',
    lost: number,
    filled: number,
    behind: number | null,
  ): void {
    const d = this.#d;
    d.sink.apply(
      behind === null
        ? { kind: 'stream-sequence', ts, server: d.server, rank: d.rank, change, lost, filled }
        : {
            kind: 'stream-sequence',
            ts,
            server: d.server,
            rank: d.rank,
            change,
            lost,
            filled,
            subscriberBehindMs: behind,
          },
    );
  }

  #reset(fromSeq: bigint, toSeq: bigint, cause: LifeChange): void {
    this.counters.resets++;
    this.#d.converter.resetRank(this.#d.rank);
    this.#d.logger.warn(
      `${this.#d.name}: new publisher life (${LIFE_CAUSE[cause]}; seq ${fromSeq} -> ${toSeq}): its table starts over`,
      { server: this.#d.server },
    );
    this.#observe('reset', 0, 0);
  }

  #deliver(seq: bigint, arrival: Arrival, replayed: boolean): void {
    const d = this.#d;
    this.counters.batches++;
    if (replayed) this.counters.replayedBatches++;
    const decoded = arrival.decoded;
    for (const i of decoded.issues) d.status.badInput(d.source, i.code);
    if (decoded.batch === null) {
      this.counters.malformed++;
      if (this.counters.malformed <= 3)
        d.logger.warn(`${d.name}: batch seq ${seq} skipped: ${decoded.issues[0]?.message ?? 'unreadable'}`);
      return;
    }
    d.status.ok(d.source);
    const converted = d.converter.convert(decoded.batch, d.rank, d.statedRank(decoded.batch.rank), `seq ${seq}`);
    for (const i of converted.issues) d.status.badInput(d.source, i.code);
    this.counters.unresolvedBlocks += converted.unresolvedBlocks;
    this.counters.unmatchedRemovals += converted.unknownRemovals;
    if (converted.events.length === 0) return;
    const ts = d.clock();
    // one literal per shape, not a conditional spread: this runs once per batch
    d.sink.apply(
      converted.engineChecks === null
        ? { kind: 'worker-events', ts, server: d.server, firstSeq: 0, events: converted.events, stream: d.origin }
        : {
            kind: 'worker-events',
            ts,
            server: d.server,
            firstSeq: 0,
            events: converted.events,
            stream: d.origin,
            engineChecks: converted.engineChecks,
          },
    );
  }

  #gap(lost: number, filled: number, history: boolean): void {
    if (history) {
      if (lost === 0) return;
      this.#d.logger.warn(
        `${this.#d.name}: joined after ${lost} batches it cannot replay (no longer buffered, or no replay endpoint): what they stored is unknown until the table has turned over`,
        { server: this.#d.server },
      );
      this.#observe('history-incomplete', lost, filled);
      return;
    }
    if (lost > 0) {
      this.counters.gaps++;
      this.counters.lostBatches += lost;
      this.#d.logger.warn(
        `${this.#d.name}: ${lost} batches lost in a seq gap${filled > 0 ? ` (${filled} replayed)` : ''}`,
        { server: this.#d.server },
      );
    }
    this.#observe('gap', lost, filled);
  }
}
