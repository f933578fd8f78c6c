// Property test of the relay's event path (src/sources/relay/relay-event-path.ts, the logic WorkerRelay runs behind
// its sockets) over an in-memory worker: 1 000 generated schedules per CI run of event bursts, concurrent polls
// from several consumers (the same consumer twice at once included), timer drains racing polls, drains that fail
// (HTTP 5xx, timeout, garbage, truncated JSON), consumers that hang up while their poll waits for a slow drain
// (with other consumers polling meanwhile and the worker emitting more), consumers silent long enough to be
// forgotten, and more consumers than the buffer keeps. After each schedule:
// - every consumer received, in the order its polls were answered, every event the worker handed over in a
//   well-formed body exactly once and in order, except events counted as dropped to that consumer;
// - each answer continues exactly where the consumer's previous one ended, plus what it was told it lost;
// - the state was fed every handed-over event exactly once, with its relay seq;
// - every failed drain is counted by reason, and every hang-up once.
// relay-schedules.test.ts runs the same kind of schedules over real sockets (200 per run).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseKvEvents } from '../../src/core/wire/parse-kv-events.js';
import { SourceReadError } from '../../src/sources/http/fetch-text.js';
import { silentLogger } from '../../src/sources/ports.js';
import { RelayEventPath } from '../../src/sources/relay/relay-event-path.js';
import { SourceStatusBoard } from '../../src/sources/source-status.js';
import { RecordingSink } from '../helpers/recording-sink.js';

type DrainMode = 'ok' | 'http-500' | 'timeout' | 'garbage' | 'truncated';

const eventText = (id: number): string =>
  `{"event_id":${id},"data":{"type":"removed","block_hashes":[${18_446_744_073_709_551_615n - BigInt(id)}]},"window_size":4096}`;
const idOf = (t: string): number => Number(/"event_id":(\d+)/.exec(t)?.[1]);
const idsOf = (body: Uint8Array): number[] =>
  [
    ...Buffer.from(body)
      .toString('utf8')
      .matchAll(/"event_id":(\d+)/g),
  ].map((m) => Number(m[1]));
/** lets every pending promise callback and setImmediate run */
const settle = (): Promise<void> => new Promise((r) => setImmediate(r));

/** A CTX worker's destructive event queue, in memory; each drain answers as the script says (then 'ok'). */
class MemoryWorker {
  queue: string[] = [];
  nextId = 0;
  /** ids handed over in a well-formed body, in order */
  readonly good: number[] = [];
  readonly script: DrainMode[] = [];
  readonly counts: Record<DrainMode, number> = { ok: 0, 'http-500': 0, timeout: 0, garbage: 0, truncated: 0 };
  drains = 0;
  /** when set, the next drain waits for release() after it arrives (a slow worker) */
  hold: { arrived: () => void; released: Promise<void> } | null = null;
  release: () => void = () => undefined;

  emit(n: number): void {
    for (let k = 0; k < n; k++) this.queue.push(eventText(this.nextId++));
  }

  holdNext(): Promise<void> {
    return new Promise<void>((arrived) => {
      const released = new Promise<void>((r) => (this.release = r));
      this.hold = { arrived, released };
    });
  }

  readonly drain = async (): Promise<string> => {
    this.drains++;
    const hold = this.hold;
    this.hold = null;
    await settle(); // a drain is never synchronous: polls and timers interleave with it
    if (hold !== null) {
      hold.arrived();
      await hold.released;
    }
    const mode = this.script.shift() ?? 'ok';
    this.counts[mode]++;
    if (mode === 'http-500') throw new SourceReadError('http_status', 'worker: HTTP 500');
    if (mode === 'timeout') throw new SourceReadError('timeout', 'worker: timed out');
    const items = this.queue.splice(0); // read at answer time: what the worker holds when it answers
    const body = `[${items.join(',')}]`;
    if (mode === 'garbage') return '<html>502 Bad Gateway</html>';
    if (mode === 'truncated') return body.slice(0, Math.max(1, body.length - 7));
    this.good.push(...items.map(idOf));
    return body;
  };
}

type Step =
  | { readonly kind: 'emit'; readonly n: number }
  | {
      readonly kind: 'polls';
      readonly consumers: readonly number[];
      readonly faults: readonly DrainMode[];
      readonly tick: boolean;
    }
  | { readonly kind: 'hang-up'; readonly c: number; readonly others: readonly number[]; readonly emitMeanwhile: number }
  | { readonly kind: 'silence'; readonly ms: number };

const CONSUMERS = 4;
const consumerArb = fc.integer({ min: 0, max: CONSUMERS - 1 });
const faultArb = fc.constantFrom<DrainMode>('ok', 'ok', 'ok', 'ok', 'http-500', 'timeout', 'garbage', 'truncated');
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('emit' as const), n: fc.integer({ min: 1, max: 8 }) }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('polls' as const),
      consumers: fc.array(consumerArb, { minLength: 1, maxLength: 5 }),
      faults: fc.array(faultArb, { maxLength: 2 }),
      tick: fc.boolean(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('hang-up' as const),
      c: consumerArb,
      others: fc.array(consumerArb, { maxLength: 3 }),
      emitMeanwhile: fc.integer({ min: 0, max: 4 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('silence' as const), ms: fc.integer({ min: 0, max: 3_000 }) }),
  },
);

export const RELAY_PATH_SCHEDULES = Number(process.env.KVS_RELAY_PATH_SCHEDULES ?? 1_000);

describe(`relay event path under generated schedules (${RELAY_PATH_SCHEDULES} per run)`, () => {
  it('exactly once and in order per consumer, under concurrent polls, timer drains, failing drains, hang-ups and forgotten consumers', async () => {
    const seen = { hangUps: 0, failedDrains: 0, dropped: 0, forgotten: 0, evictedConsumers: 0 };
    await fc.assert(
      fc.asyncProperty(
        fc.array(stepArb, { minLength: 1, maxLength: 14 }),
        fc.record({
          maxEvents: fc.integer({ min: 3, max: 40 }),
          consumerIdleMs: fc.integer({ min: 500, max: 2_000 }),
          retainReadMs: fc.integer({ min: 0, max: 1_000 }),
          maxConsumers: fc.integer({ min: 2, max: CONSUMERS }),
        }),
        async (steps, bufferOptions) => {
          let now = 1_000_000;
          const clock = (): number => now;
          const worker = new MemoryWorker();
          const sink = new RecordingSink();
          const status = new SourceStatusBoard({ sink, clock });
          const path = new RelayEventPath(
            {
              server: 'ctx0',
              source: 'relay:ctx0',
              upstream: 'memory://ctx0',
              drain: worker.drain,
              sink,
              status,
              clock,
              logger: silentLogger,
              parseEvents: parseKvEvents,
            },
            bufferOptions,
          );
          /** per consumer, in the order its polls were answered */
          const received: number[][] = Array.from({ length: CONSUMERS }, () => []);
          let hangUps = 0;
          const poll = (c: number, gone: () => boolean = () => false): Promise<boolean> =>
            path.poll(
              () => `router-${c}`,
              gone,
              (body) => received[c]!.push(...idsOf(body)),
            );

          for (let c = 0; c < CONSUMERS; c++) await poll(c); // the replicas poll from the start
          for (const step of steps) {
            if (step.kind === 'emit') {
              worker.emit(step.n);
            } else if (step.kind === 'polls') {
              worker.script.push(...step.faults);
              const polls = step.consumers.map((c) => poll(c));
              if (step.tick) polls.push(path.tick().then(() => true));
              expect(await Promise.all(polls)).toEqual(polls.map(() => true));
            } else if (step.kind === 'hang-up') {
              // the poll of step.c waits for a slow drain; its router times out and hangs up; others poll meanwhile
              // (their polls queue a drain behind the slow one) and the worker emits more
              const arrived = worker.holdNext();
              let gone = false;
              const abandoned = poll(step.c, () => gone);
              await arrived;
              gone = true;
              path.hungUp();
              hangUps++;
              worker.emit(step.emitMeanwhile);
              const others = step.others.map((c) => poll(c));
              worker.release();
              expect(await abandoned).toBe(false);
              expect(await Promise.all(others)).toEqual(others.map(() => true));
            } else {
              now += step.ms; // consumers silent for longer than consumerIdleMs are forgotten at the next read
            }
          }
          worker.script.length = 0;
          for (let c = 0; c < CONSUMERS; c++) await poll(c);
          await settle();

          const stats = path.bufferStats();
          const polls = sink.of('router-poll');
          for (let c = 0; c < CONSUMERS; c++) {
            const name = `router-${c}`;
            const got = received[c]!;
            // in order and never twice, across answers
            for (let k = 1; k < got.length; k++) expect(got[k]).toBeGreaterThan(got[k - 1]!);
            // each answer continues where the previous one ended, plus what the consumer was told it lost
            const mine = polls.filter((p) => p.consumer === name);
            let lost = 0;
            for (let k = 1; k < mine.length; k++) {
              const prev = mine[k - 1]!;
              const cur = mine[k]!;
              if (cur.fromSeq !== prev.toSeq + cur.dropped)
                throw new Error(
                  `${name}: read ${cur.fromSeq}..${cur.toSeq} (lost ${cur.dropped}) after ${prev.fromSeq}..${prev.toSeq}`,
                );
              lost += cur.dropped;
            }
            // every event handed over reached it, or was counted as lost to it (event ids equal relay seqs here)
            expect(got.length + lost).toBe(worker.good.length);
            if (lost === 0) expect(got).toEqual(worker.good);
            seen.dropped += lost;
          }
          // the state saw every handed-over event exactly once, at its relay seq
          const fed = sink.of('worker-events').flatMap((o) => o.events.map((e, i) => [o.firstSeq + i, e.eventId]));
          expect(fed).toEqual(worker.good.map((id, seq) => [seq, id]));
          // failures counted by reason; hang-ups once each
          const s = status.list().find((x) => x.source === 'relay:ctx0');
          expect(s?.errors.http_status ?? 0).toBe(worker.counts['http-500']);
          expect(s?.errors.timeout ?? 0).toBe(worker.counts.timeout);
          expect(s?.errors.parse ?? 0).toBe(worker.counts.garbage + worker.counts.truncated);
          expect(path.abandonedPolls).toBe(hangUps);
          expect(stats.retainedEvents).toBeLessThanOrEqual(bufferOptions.maxEvents);
          seen.hangUps += hangUps;
          seen.failedDrains +=
            worker.counts['http-500'] + worker.counts.timeout + worker.counts.garbage + worker.counts.truncated;
          seen.forgotten += stats.expiredConsumers;
          seen.evictedConsumers += stats.evictedConsumers;
        },
      ),
      { numRuns: RELAY_PATH_SCHEDULES },
    );
    // the generator reaches every fault it claims to
    expect(Object.values(seen).every((n) => n > 0)).toBe(true);
  }, 120_000);
});
