// kvsentinel in relay mode, as the virtual-time driver models it: the sole consumer of one CTX worker's
// /kv_cache_events; it re-serves everything it drained to each consumer exactly once through the relay's own event
// log (src/core/relay/event-buffer.ts, the one the real relay runs) and reports what it drained and what each
// consumer received. Drains happen on each poll and on the driver's timer, like the real relay's; a poll while the
// worker is down is answered from the buffer, as the real relay answers it (relay-event-path.ts).
import type { Observation } from '../core/observe/observation.js';
import { EventBuffer, type EventBufferOptions } from '../core/relay/event-buffer.js';
import type { KvEvent } from '../core/wire/kv-event.js';
import type { CtxWorker } from './ctx-worker.js';
import type { Scheduler } from './scheduler.js';

// The real relay bounds the JSON text it keeps; the model keeps objects, so it charges each one what its text
// would cost (serialize-kv-events.ts): ~60 characters per token object, ~150 per block and per event around them.
const TOKEN_JSON = 60;
const BLOCK_JSON = 150;
const HASH_JSON = 21;
const EVENT_JSON = 100;

export function approximateJsonLength(event: KvEvent): number {
  const data = event.data;
  if (data.type === 'stored') {
    let length = EVENT_JSON;
    for (const block of data.blocks) length += BLOCK_JSON + block.tokens.length * TOKEN_JSON;
    return length;
  }
  if (data.type === 'removed') return EVENT_JSON + data.blockHashes.length * HASH_JSON;
  return EVENT_JSON;
}

type RelayedWorker = Pick<CtxWorker, 'id' | 'drainEvents'>;

export class RelayModel {
  readonly server: string;
  readonly #worker: RelayedWorker;
  readonly #scheduler: Scheduler;
  readonly #emit: (observation: Observation) => void;
  readonly #buffer: EventBuffer<KvEvent>;

  constructor(
    worker: RelayedWorker,
    scheduler: Scheduler,
    emit: (observation: Observation) => void,
    buffer: Partial<EventBufferOptions> = {},
  ) {
    this.server = worker.id;
    this.#worker = worker;
    this.#scheduler = scheduler;
    this.#emit = emit;
    this.#buffer = new EventBuffer<KvEvent>(buffer, approximateJsonLength);
  }

  /** next relay sequence number */
  get seq(): number {
    return this.#buffer.nextSeq;
  }

  /**
   * Drains the worker and records what arrived. A drain that fails (the worker is down) is reported as the real
   * relay's source status does, and the relay goes on answering consumers from what it holds.
   */
  pull(): void {
    let events: readonly KvEvent[];
    try {
      events = this.#worker.drainEvents();
    } catch (err) {
      this.#emit({
        kind: 'source-health',
        ts: this.#scheduler.now(),
        source: `relay:${this.server}`,
        up: false,
        error: err instanceof Error ? err.message : String(err),
      });
      return;
    }
    if (events.length === 0) return;
    const ts = this.#scheduler.now();
    const firstSeq = this.#buffer.append(events, ts);
    this.#emit({ kind: 'worker-events', ts, server: this.server, firstSeq, events });
  }

  /** a consumer's POST /kv_cache_events on the relay port */
  serve(consumer: string): readonly KvEvent[] {
    this.pull();
    const ts = this.#scheduler.now();
    const read = this.#buffer.read(consumer, ts);
    this.#emit({
      kind: 'router-poll',
      ts,
      server: this.server,
      consumer,
      fromSeq: read.fromSeq,
      toSeq: read.toSeq,
      dropped: read.dropped,
    });
    return read.items;
  }
}
