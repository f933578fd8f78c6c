// The soak workload, shared by the CI test (reduced size) and scripts/soak.sh (10 M events, 1 M decisions): block
// churn (store, then remove the oldest once a server holds its working set) on four servers, through the relay's
// event buffer (exact JSON texts, a router consumer polling, a second consumer that goes silent and must be
// forgotten) and the state (worker truth, router replica, joins); decisions in 5-turn trajectories with growing
// prompts, one in ten never answered. Memory is sampled along the way (the curve the full run records).
import { EventBuffer, type EventBufferStats } from '../../src/core/relay/event-buffer.js';
import {
  createSentinelState,
  type SentinelLimits,
  type SentinelStateSnapshot,
} from '../../src/core/state/sentinel-state.js';
import type { KvEvent } from '../../src/core/wire/kv-event.js';
import { removed, stored } from '../helpers/kv-event-builders.js';
import { serializeKvEvent } from '../../src/core/wire/serialize-kv-events.js';

export interface SoakOptions {
  readonly events: number;
  readonly decisions: number;
  /** blocks each server holds before it starts removing its oldest */
  readonly workingSet: number;
  readonly limits: Partial<SentinelLimits>;
  readonly bufferMaxEvents: number;
  readonly samples: number;
  readonly onSample?: ((s: SoakSample) => void) | undefined;
}

export interface SoakSample {
  readonly events: number;
  readonly decisions: number;
  readonly rssMiB: number;
  readonly heapUsedMiB: number;
}

export interface SoakResult {
  readonly samples: readonly SoakSample[];
  readonly snapshot: SentinelStateSnapshot;
  readonly buffer: EventBufferStats;
  readonly maxRetainedEvents: number;
}

const SERVERS = ['ctx0', 'ctx1', 'ctx2', 'ctx3'];
const BLOCKS_PER_EVENT = 4;
const MASK = (1n << 64n) - 1n;

function hashOf(n: number): bigint {
  return ((BigInt(n) + 1n) * 0x9e3779b97f4a7c15n) & MASK; // distinct, spread over all 64 bits (most above 2^53)
}

export function runSoak(o: SoakOptions): SoakResult {
  const state = createSentinelState({ mode: 'relay', windowMs: 300_000, limits: o.limits });
  const buffer = new EventBuffer({ maxEvents: o.bufferMaxEvents, consumerIdleMs: 60_000, retainReadMs: 1_000 });
  const samples: SoakSample[] = [];
  const held = SERVERS.map(() => [] as bigint[][]);
  const heldFrom = SERVERS.map(() => 0);
  const seq = SERVERS.map(() => 0);
  const eventId = SERVERS.map(() => 0);
  let now = 1_700_000_000_000;
  let nextHash = 0;
  let events = 0;
  let decisions = 0;
  let maxRetained = 0;
  const sampleEvery = Math.max(1, Math.floor(o.events / o.samples));
  const decisionEvery = Math.max(1, Math.floor(o.events / Math.max(1, o.decisions)));
  const sample = (): void => {
    const m = process.memoryUsage();
    const s = { events, decisions, rssMiB: Math.round(m.rss / 1048576), heapUsedMiB: Math.round(m.heapUsed / 1048576) };
    samples.push(s);
    o.onSample?.(s);
  };

  buffer.read('router-silent', now); // a replica that polls once and then never again
  while (events < o.events) {
    const i = events % SERVERS.length;
    const server = SERVERS[i] as string;
    const mine = held[i] as bigint[][];
    let ev: KvEvent;
    if (mine.length - (heldFrom[i] as number) >= o.workingSet / BLOCKS_PER_EVENT) {
      ev = removed(mine[heldFrom[i] as number] as bigint[], { eventId: eventId[i] as number });
      mine[heldFrom[i] as number] = [];
      heldFrom[i] = (heldFrom[i] as number) + 1;
      if (heldFrom[i] > 4096) {
        held[i] = mine.slice(heldFrom[i]);
        heldFrom[i] = 0;
      }
    } else {
      const hashes = Array.from({ length: BLOCKS_PER_EVENT }, () => hashOf(nextHash++));
      mine.push(hashes);
      ev = stored(hashes, { eventId: eventId[i] as number });
    }
    eventId[i] = (eventId[i] as number) + 1;
    now += 1;
    if (i === 0) buffer.append([serializeKvEvent(ev)], now);
    state.apply({ kind: 'worker-events', ts: now, server, firstSeq: seq[i] as number, events: [ev] });
    seq[i] = (seq[i] as number) + 1;
    events++;
    if (events % 64 === 0) {
      const r = buffer.read('router', now);
      maxRetained = Math.max(maxRetained, buffer.stats().retainedEvents);
      state.apply({
        kind: 'router-poll',
        ts: now,
        server: 'ctx0',
        consumer: 'router',
        fromSeq: r.fromSeq,
        toSeq: r.toSeq,
        dropped: r.dropped,
      });
    }
    if (events % decisionEvery === 0 && decisions < o.decisions) {
      const traj = Math.floor(decisions / 5);
      const turn = decisions % 5;
      const prompt = new Uint32Array(256 + turn * 64);
      for (let k = 0; k < prompt.length; k++) prompt[k] = (traj * 7919 + k) % 150_000;
      const requestId = `r${decisions}`;
      const chosen = SERVERS[traj % SERVERS.length] as string;
      state.apply({
        kind: 'decision',
        ts: now,
        requestId,
        correlationId: `t${traj}`,
        server: chosen,
        promptTokens: prompt,
        promptTokenCount: prompt.length,
        inflight: null,
      });
      if (decisions % 10 !== 9)
        state.apply({
          kind: 'outcome',
          ts: now + 1,
          requestId,
          server: chosen,
          ok: true,
          promptTokens: prompt.length,
          cachedTokens: turn * 64,
          latencyMs: 5,
        });
      decisions++;
    }
    if (events % sampleEvery === 0) sample();
  }
  sample();
  return { samples, snapshot: state.evaluate(now), buffer: buffer.stats(), maxRetainedEvents: maxRetained };
}
