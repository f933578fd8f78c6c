// The relay's event path without its sockets: drain the worker's destructive queue into the event buffer, answer
// each consumer's poll from the buffer after a drain that started after the poll, and leave a consumer that hung up
// meanwhile where it was. WorkerRelay puts HTTP around it; the relay's schedule property test drives it over an
// in-memory upstream, so the exactly-once logic is tested on thousands of schedules.
//
// Decisions:
// - Never two drains in flight to one worker (CoalescingRunner); a poll waits for a drain that *started* after it,
//   so the router sees events as soon as they exist.
// - When a drain fails the poll is still answered from the buffer: the failure is the relay's to report (a counted
//   error, up = 0), not the router's to retry.
// - A body that is not a JSON array is not kept (the items cannot be delimited): counted as a parse error. Items the
//   domain parser rejects are still kept and forwarded byte for byte: the relay never edits the stream.
// - A consumer that hung up while its poll waited (a router poll timeout on a slow drain) is not read for: its
//   cursor stays and the events wait for its next poll (counted in abandonedPolls).
// - Parsing happens off the poll's path (setImmediate): the consumer gets its answer first.
import {
  BODY_VIEWS,
  EventBuffer,
  serializeEventItems,
  type EventBufferOptions,
  type EventBufferStats,
} from '../../core/relay/event-buffer.js';
import type { ReadRetentionShare } from '../../core/relay/read-retention.js';
import { splitJsonArrayBytes } from '../../core/relay/split-json-array.js';
import { consecutiveRuns } from '../../core/wire/consecutive-runs.js';
import type { KvEvent } from '../../core/wire/kv-event.js';
import type { WireIssue } from '../../core/wire/wire-issue.js';
import { CoalescingRunner } from '../coalescing-runner.js';
import { reasonOf } from '../http/fetch-text.js';
import type { Clock, Logger, ObservationSink, SourceReporter } from '../ports.js';

const MAX_TRACKED_CONSUMERS = 1024;

export interface ParsedEventsLike {
  readonly events: readonly { readonly event: KvEvent; readonly index: number }[];
  readonly issues: readonly WireIssue[];
}

/** parses a `/kv_cache_events` body: its bytes as drained, or text (the watch sources, tests) */
export type ParseEvents = (body: Uint8Array | string) => ParsedEventsLike;

export interface RelayEventPathDeps {
  /** server id of observations */
  readonly server: string;
  /** source name of health reports, e.g. relay:ctx0 */
  readonly source: string;
  /** names the upstream in error messages, e.g. its URL */
  readonly upstream: string;
  /** one drain of the worker's queue: the body's bytes (or its text); throws on failure (classified by reasonOf) */
  readonly drain: () => Promise<Uint8Array | string>;
  readonly sink: ObservationSink;
  readonly status: SourceReporter;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly parseEvents: ParseEvents;
}

export class RelayEventPath {
  readonly #deps: RelayEventPathDeps;
  readonly #buffer: EventBuffer<Uint8Array>;
  readonly #drainer: CoalescingRunner;
  #abandonedPolls = 0;
  /** per consumer, the relay seq after the last event it was given: a read starting below it is a redelivery */
  readonly #delivered = new Map<string, number>();
  #redelivered = 0;

  /** `readShare`: the relay's part of the process's read-history budget (read-retention.ts); null: none */
  constructor(
    deps: RelayEventPathDeps,
    buffer: Partial<EventBufferOptions> = {},
    readShare: ReadRetentionShare | null = null,
  ) {
    this.#deps = deps;
    this.#buffer = new EventBuffer<Uint8Array>(buffer, undefined, BODY_VIEWS, readShare);
    this.#drainer = new CoalescingRunner(() => this.#drainOnce());
  }

  /** event polls whose consumer hung up before the answer (their events stay for the consumer's next poll) */
  get abandonedPolls(): number {
    return this.#abandonedPolls;
  }

  /** events given to a consumer that had already received them (the buffer's cursors make it 0; counted anyway) */
  get redelivered(): number {
    return this.#redelivered;
  }

  bufferStats(): EventBufferStats {
    return this.#buffer.stats();
  }

  /** A timer's drain: skipped while one is in flight. */
  tick(): Promise<void> {
    return this.#drainer.tick();
  }

  /** A drain that starts after this call (tests, shutdown hooks). */
  drainNow(): Promise<void> {
    return this.#drainer.runFresh();
  }

  idle(): Promise<void> {
    return this.#drainer.idle();
  }

  /**
   * One consumer poll: waits for a fresh drain, then hands `respond` the JSON array (bytes) of everything since the
   * consumer's last read, exactly once. When `gone()` says the consumer hung up meanwhile, nothing is read and
   * false is returned (the hang-up is counted once, by whoever calls hungUp()).
   */
  async poll(consumer: () => string, gone: () => boolean, respond: (body: Uint8Array) => void): Promise<boolean> {
    await this.#drainer.runFresh();
    if (gone()) return false;
    const name = consumer();
    const read = this.#buffer.read(name, this.#deps.clock());
    this.#countRedelivery(name, read.fromSeq, read.toSeq);
    respond(serializeEventItems(read.items));
    this.#deps.sink.apply({
      kind: 'router-poll',
      ts: this.#deps.clock(),
      server: this.#deps.server,
      consumer: name,
      fromSeq: read.fromSeq,
      toSeq: read.toSeq,
      dropped: read.dropped,
    });
    return true;
  }

  #countRedelivery(consumer: string, fromSeq: number, toSeq: number): void {
    if (toSeq <= fromSeq) return;
    const before = this.#delivered.get(consumer);
    if (before !== undefined && fromSeq < before) this.#redelivered += Math.min(before, toSeq) - fromSeq;
    this.#delivered.delete(consumer);
    this.#delivered.set(consumer, Math.max(before ?? 0, toSeq));
    // bounded like the buffer's consumers: the longest silent is forgotten first
    if (this.#delivered.size > MAX_TRACKED_CONSUMERS)
      this.#delivered.delete(this.#delivered.keys().next().value as string);
  }

  /** The consumer of a pending poll hung up. */
  hungUp(): void {
    this.#abandonedPolls++;
  }

  async #drainOnce(): Promise<void> {
    const { status, source } = this.#deps;
    let body: Uint8Array;
    try {
      const drained = await this.#deps.drain();
      body = typeof drained === 'string' ? Buffer.from(drained) : drained;
    } catch (err) {
      status.fail(source, reasonOf(err), err instanceof Error ? err.message : String(err));
      return;
    }
    // the body is split and parsed from its bytes: no decode to a string anywhere on this path
    const split = splitJsonArrayBytes(body);
    if (!split.ok) {
      status.badInput(source, split.issue.code);
      status.fail(source, 'parse', `${this.#deps.upstream}: ${split.issue.message}`);
      return;
    }
    status.ok(source);
    if (split.items.length === 0) return;
    const ts = this.#deps.clock();
    const firstSeq = this.#buffer.append(split.items, ts);
    setImmediate(() => this.#emitEvents(body, firstSeq, ts));
  }

  #emitEvents(body: Uint8Array, firstSeq: number, ts: number): void {
    const { status, source } = this.#deps;
    let parsed: ParsedEventsLike;
    try {
      parsed = this.#deps.parseEvents(body);
    } catch (err) {
      status.badInput(source, 'parser-crash');
      this.#deps.logger.error(`${source}: event parser threw`, { error: String(err) });
      return;
    }
    for (const issue of parsed.issues) status.badInput(source, issue.code);
    // one observation per run of consecutive items, so relay seqs stay exact when a bad item was skipped
    for (const run of consecutiveRuns(parsed.events)) {
      this.#deps.sink.apply({
        kind: 'worker-events',
        ts,
        server: this.#deps.server,
        firstSeq: firstSeq + run.start,
        events: run.events,
      });
    }
  }
}
