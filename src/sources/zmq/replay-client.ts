// One rank's replay requests to its publisher's replay ROUTER (vLLM: ["", start_seq] answered by every buffered
// batch from start_seq, then an end marker). Each request gets a socket of its own: vLLM answers with its whole
// buffer from start_seq in one tight loop, so a round the sequencer has finished with (it reached the gap's end, or
// found its replies torn) still has replies, and perhaps an end marker, on the way. Closing that round's socket
// drops them, so nothing of an earlier round can reach a later one, and the sidecar reads no more of a large answer
// than the gap it fills. Requests are paced: vLLM answers on the thread that publishes, looping over its whole buffer
// from the start seq, so a sidecar that falls behind and asks at every gap would hold up the engine's own events.
import { Dealer } from 'zeromq';
import { decodeReplayMessage, replayRequest } from '../../core/stream/stream-frames.js';
import type { Logger } from '../ports.js';
import type { RankPipeline } from './rank-pipeline.js';

export interface ReplayClientOptions {
  /** the replay socket's receive high-water mark (see ZmqSourceOptions.replayReceiveHighWaterMark) */
  readonly receiveHighWaterMark: number;
  /** a round that has not ended by then is ended (what it did not bring counts as lost, or is asked again) */
  readonly timeoutMs: number;
  /** requests are at least this far apart (a later one waits, its live batches held meanwhile) */
  readonly minIntervalMs: number;
}

export class ReplayClient {
  readonly #endpoint: string;
  readonly #options: ReplayClientOptions;
  readonly #logger: Logger;
  /** for log lines: `zmq:ID rank R` */
  readonly #name: string;
  readonly #malformed: (code: string) => void;
  #pipeline: RankPipeline | null = null;
  #dealer: Dealer | null = null;
  #timer: NodeJS.Timeout | null = null;
  /** a request waiting for its turn (see minIntervalMs) */
  #paced: NodeJS.Timeout | null = null;
  #lastSentAt = Number.NEGATIVE_INFINITY;
  readonly #loops = new Set<Promise<void>>();
  #closed = false;

  constructor(
    endpoint: string,
    options: ReplayClientOptions,
    deps: { readonly logger: Logger; readonly name: string; readonly malformed: (code: string) => void },
  ) {
    this.#endpoint = endpoint;
    this.#options = options;
    this.#logger = deps.logger;
    this.#name = deps.name;
    this.#malformed = deps.malformed;
  }

  /** the pipeline whose sequencer the replies feed (it asks through request()) */
  attach(pipeline: RankPipeline): void {
    this.#pipeline = pipeline;
  }

  /** Asks for the batches from `fromSeq`; a round still in flight is dropped with its socket. */
  request(fromSeq: bigint): void {
    const pipeline = this.#pipeline;
    if (pipeline === null) return;
    this.#finish();
    if (this.#closed) {
      pipeline.replayEnded();
      return;
    }
    const wait = this.#lastSentAt + this.#options.minIntervalMs - Date.now();
    if (wait > 0) {
      this.#paced = setTimeout(() => {
        this.#paced = null;
        this.#send(fromSeq, pipeline);
      }, wait);
      this.#paced.unref();
      return;
    }
    this.#send(fromSeq, pipeline);
  }

  #send(fromSeq: bigint, pipeline: RankPipeline): void {
    this.#lastSentAt = Date.now();
    const dealer = new Dealer({ linger: 0, receiveHighWaterMark: this.#options.receiveHighWaterMark });
    dealer.connect(this.#endpoint);
    this.#dealer = dealer;
    const loop: Promise<void> = this.#receive(dealer, pipeline).finally(() => this.#loops.delete(loop));
    this.#loops.add(loop);
    this.#timer = setTimeout(() => {
      if (this.#dealer !== dealer) return;
      this.#logger.warn(
        `${this.#name}: replay from seq ${fromSeq} did not end within ${this.#options.timeoutMs} ms (${this.#endpoint})`,
      );
      this.#end(dealer, pipeline);
    }, this.#options.timeoutMs);
    this.#timer.unref();
    dealer.send(replayRequest(fromSeq)).catch((err: unknown) => {
      if (this.#dealer !== dealer) return;
      this.#logger.warn(`${this.#name}: replay request failed: ${String(err)}`);
      this.#end(dealer, pipeline);
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#finish();
    await Promise.allSettled([...this.#loops]);
  }

  /** The round on `dealer` ended (its end marker, its timeout, a failed request): the sequencer settles it. */
  #end(dealer: Dealer, pipeline: RankPipeline): void {
    if (this.#dealer !== dealer) return;
    this.#finish();
    // a sequencer that already settled the replay itself (too many held batches) has nothing to end
    if (pipeline.sequencer.readingReplay) pipeline.replayEnded();
  }

  /** Drops the round in flight: its socket (with what is still on the way) and its timer. */
  #finish(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    if (this.#paced !== null) clearTimeout(this.#paced);
    this.#paced = null;
    this.#dealer?.close();
    this.#dealer = null;
  }

  async #receive(dealer: Dealer, pipeline: RankPipeline): Promise<void> {
    try {
      for await (const frames of dealer) {
        if (this.#dealer !== dealer) return;
        const reply = decodeReplayMessage(frames);
        if (!reply.ok) {
          this.#malformed(reply.issue.code);
          continue;
        }
        if (reply.value === null) {
          this.#end(dealer, pipeline);
          return;
        }
        pipeline.replayed(reply.value.seq, reply.value.payload);
        // the sequencer finished with this round by itself (the gap filled and the live stream has the rest, or a
        // skip ended it): the rest of the answer is not read
        if (this.#dealer === dealer && !pipeline.sequencer.readingReplay) {
          this.#finish();
          return;
        }
      }
    } catch (err) {
      if (!this.#closed && this.#dealer === dealer)
        this.#logger.warn(`${this.#name}: replay socket failed: ${String(err)}`);
    }
  }
}
