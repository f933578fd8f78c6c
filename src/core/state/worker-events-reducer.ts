// Worker events into the state: drained or streamed events update worker truth and the event-sequence trackers,
// count gaps, resets and hash checks, and reach the router's replica as the router reads them (relay buffer) or,
// for a stream the router subscribes to itself, at once.
import type { StreamSequenceObservation, WorkerEventsObservation } from '../observe/observation.js';
import type { HashAlgo } from '../wire/kv-event.js';
import { counterKeys, type CounterKey, type KeptBy } from './counter-key.js';
import type { StoredEventCheck } from './hash-verifier.js';
import type { SourceHealthBoard } from './source-health-board.js';
import type { StateModel } from './state-model.js';

/** The counters of the worker events, grouped by the labels they are kept by (counter-key.ts). */
export type WorkerEventCounters = KeptBy<
  ['server'],
  | 'drains'
  | 'emptyDrains'
  | 'events'
  | 'streamEvents'
  | 'streamBatchesFilled'
  | 'storedEvents'
  /** blocks a stream stored (vLLM, SGLang, TensorRT-LLM streams) */
  | 'streamStoredBlocks'
  /** of those, blocks whose identity covers more than their tokens (salt, LoRA, multimodal keys) */
  | 'streamScopedBlocks'
  | 'gaps'
  | 'missedEvents'
  | 'resets'
  | 'hashMatch'
  | 'hashMismatch'
  | 'hashUnverifiable'
> &
  KeptBy<['server', 'rank'], 'rankEvents' | 'rankGaps' | 'rankMissedEvents' | 'rankResets'>;

const counterKey = counterKeys<WorkerEventCounters>();

/**
 * The keys a server's events add to on every observation, made once per server: a stream brings one observation
 * per batch, tens of thousands a second, and a key made afresh is a new string to build and hash each time.
 */
class ServerEventKeys {
  readonly streamEvents: CounterKey;
  readonly events: CounterKey;
  readonly storedEvents: CounterKey;
  readonly streamStoredBlocks: CounterKey;
  readonly streamScopedBlocks: CounterKey;
  readonly hashMatch: CounterKey;
  readonly hashMismatch: CounterKey;
  readonly hashUnverifiable: CounterKey;
  readonly #server: string;
  readonly #rankEvents: CounterKey[] = [];

  constructor(server: string) {
    this.#server = server;
    this.streamEvents = counterKey('streamEvents', server);
    this.events = counterKey('events', server);
    this.storedEvents = counterKey('storedEvents', server);
    this.streamStoredBlocks = counterKey('streamStoredBlocks', server);
    this.streamScopedBlocks = counterKey('streamScopedBlocks', server);
    this.hashMatch = counterKey('hashMatch', server);
    this.hashMismatch = counterKey('hashMismatch', server);
    this.hashUnverifiable = counterKey('hashUnverifiable', server);
  }

  rankEvents(rank: number): CounterKey {
    // ranks are small integers (attention DP); an odd one is keyed afresh rather than widening the array
    if (rank < 0 || rank >= 1024 || !Number.isInteger(rank)) return counterKey('rankEvents', this.#server, rank);
    return (this.#rankEvents[rank] ??= counterKey('rankEvents', this.#server, rank));
  }
}

/** What the other reducers read of worker truth's progress. */
export interface WorkerTruthSeen {
  /** a stored event was seen: worker truth can say where a prefix was */
  readonly truthSeen: boolean;
}

/** What the projections read of the worker events beyond counters and tables. */
export interface WorkerEventsView extends WorkerTruthSeen {
  /** another algorithm that reproduces the server's mismatching root blocks (the latest found) */
  alternativeAlgoOf(server: string): HashAlgo | null;
}

export class WorkerEventsReducer implements WorkerEventsView {
  readonly model: StateModel;
  readonly sources: SourceHealthBoard;
  #truthSeen = false;
  readonly #alternativeAlgo = new Map<string, HashAlgo>();
  /** per server seen (as many as the state admits: its server bound) */
  readonly #keys = new Map<string, ServerEventKeys>();

  constructor(model: StateModel, sources: SourceHealthBoard) {
    this.model = model;
    this.sources = sources;
  }

  get truthSeen(): boolean {
    return this.#truthSeen;
  }

  alternativeAlgoOf(server: string): HashAlgo | null {
    return this.#alternativeAlgo.get(server) ?? null;
  }

  workerEvents(obs: WorkerEventsObservation, checks: readonly (StoredEventCheck | null)[] | null): void {
    const m = this.model;
    const c = m.counters;
    const { server, ts } = obs;
    let keys = this.#keys.get(server);
    if (keys === undefined) this.#keys.set(server, (keys = new ServerEventKeys(server)));
    const streamed = obs.stream !== undefined;
    // a stream reaches every subscriber: a router that reads it (rather than a pull path it polls) holds the same
    const replicaFromStream = m.paths.workerEvents(server, obs.stream ?? null);
    if (streamed) c.add(ts, keys.streamEvents, obs.events.length);
    else {
      // a drain proves the relay reads its worker again, even from a source that reports only its failures
      const relaySource = `relay:${server}`;
      if (this.sources.get(relaySource)?.up === false) this.sources.report(ts, relaySource, true, null);
      c.add(ts, counterKey('drains', server));
      if (obs.events.length === 0) c.add(ts, counterKey('emptyDrains', server));
      else m.pullEvents.pullEvents(server, ts);
    }
    const firstEvent = obs.events[0];
    if (replicaFromStream && firstEvent !== undefined && m.paths.fillReplicaFromStream(server)) {
      // a stream has no `created` event: name the algorithm the replica's block count reads
      m.replica.apply(server, { ...firstEvent, data: { type: 'created', numBlocksPerCacheLevel: [] } });
    }
    const relay = m.relayOf(server);
    // per-event counts are summed over the observation (all at obs.ts) and added once: a drain carries thousands
    // of events, and a counter key is a fresh string to hash on every add
    const events = obs.events;
    const perRank = new Map<number, number>();
    let stored = 0;
    let streamStored = 0;
    let streamScoped = 0;
    let match = 0;
    let mismatch = 0;
    let unverifiable = 0;
    for (let i = 0; i < events.length; i++) {
      const event = events[i]!;
      const rank = event.attentionDpRank ?? 0;
      const seq = m.sequence.observeEvent(server, event);
      if (seq.kind === 'reset') this.#reset(ts, server, rank);
      else if (seq.kind === 'gap' && !seq.first) this.#gap(ts, server, rank, seq.missing);
      m.truth.apply(server, event);
      m.capacity.observeEvent(server, event);
      if (streamed) m.history.observeEvent(server, rank, event);
      perRank.set(rank, (perRank.get(rank) ?? 0) + 1);
      if (event.data.type === 'stored') {
        this.#truthSeen = true;
        stored++;
        if (streamed) {
          streamStored += event.data.blocks.length;
          for (const b of event.data.blocks) if (b.mmKeys.length > 0) streamScoped++;
        }
        const check = checks?.[i] ?? null;
        if (check !== null) {
          for (const result of check.checks) {
            if (result === 'match') match++;
            else if (result === 'mismatch') mismatch++;
            else unverifiable++;
          }
          if (check.alternative !== null) this.#alternativeAlgo.set(server, check.alternative);
        }
      }
      if (replicaFromStream) m.replica.apply(server, event);
      else if (!streamed) {
        const late = relay.push(obs.firstSeq + i, event);
        if (late !== null) m.replica.applyKeys(server, late.type, late.hashAlgo, late.keys);
      }
    }
    if (events.length > 0) {
      c.add(ts, keys.events, events.length);
      const blocks = m.truth.blockCount(server);
      m.capacity.observeResidency(server, blocks);
      if (streamed) m.history.settle(server, m.capacity.of(server), m.sequence.ranks(server).length, blocks);
    }
    for (const [rank, n] of perRank) c.add(ts, keys.rankEvents(rank), n);
    if (stored > 0) c.add(ts, keys.storedEvents, stored);
    if (streamStored > 0) c.add(ts, keys.streamStoredBlocks, streamStored);
    if (streamScoped > 0) c.add(ts, keys.streamScopedBlocks, streamScoped);
    if (match > 0) c.add(ts, keys.hashMatch, match);
    if (mismatch > 0) c.add(ts, keys.hashMismatch, mismatch);
    if (unverifiable > 0) c.add(ts, keys.hashUnverifiable, unverifiable);
  }

  streamSequence(obs: StreamSequenceObservation): void {
    const m = this.model;
    const { server, rank, ts } = obs;
    m.paths.streamSeen(server, obs.change === 'subscribed');
    if (obs.change === 'subscribed') return;
    if (obs.change === 'reset') {
      m.sequence.noteStreamReset(server, rank);
      m.history.reset(server, rank);
      this.#reset(ts, server, rank);
      return;
    }
    if (obs.change === 'history-incomplete') {
      // not a loss (the sidecar was not listening), but the table lacks what those batches stored
      m.history.incomplete(server, rank, ts, obs.lost);
      return;
    }
    if (obs.filled > 0) m.counters.add(ts, counterKey('streamBatchesFilled', server), obs.filled);
    if (obs.lost <= 0) return;
    m.sequence.noteStreamGap(server, rank, obs.lost);
    this.#gap(ts, server, rank, obs.lost, obs.subscriberBehindMs ?? null);
  }

  /** A rank restarted: what worker truth held for it is gone. */
  #reset(ts: number, server: string, rank: number): void {
    const c = this.model.counters;
    this.model.truth.clearRank(server, rank);
    c.add(ts, counterKey('resets', server));
    c.add(ts, counterKey('rankResets', server, rank));
  }

  /** `behindMs`: the subscriber's own backlog when a stream gap showed (the sidecar's loss), else null */
  #gap(ts: number, server: string, rank: number, missing: number, behindMs: number | null = null): void {
    const c = this.model.counters;
    this.model.sidecarLoad.gap(ts, server, missing, behindMs);
    c.add(ts, counterKey('gaps', server));
    c.add(ts, counterKey('missedEvents', server), missing);
    c.add(ts, counterKey('rankGaps', server, rank));
    c.add(ts, counterKey('rankMissedEvents', server, rank), missing);
  }
}
