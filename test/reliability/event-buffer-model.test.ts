// Model-based property test of the relay's event buffer (src/core/relay/event-buffer.ts): 1 000 generated schedules
// of appends, reads by several consumers, clock advances (idle consumers forgotten, read events released), more
// consumers than the buffer keeps (the longest silent one forgotten) and overflow of tiny bounds. After every step
// the buffer is checked against an independent model: each consumer gets every event exactly once and in order,
// except events the buffer reports as dropped to exactly that consumer, and the bounds hold (count, bytes) with
// every eviction counted.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EventBuffer } from '../../src/core/relay/event-buffer.js';

const ev = (n: number, pad: number): string =>
  `{"event_id":${n},"data":{"type":"removed","block_hashes":[18446744073709551615]}${' '.repeat(pad)}}`;
const idOf = (t: string): number => Number(/"event_id":(\d+)/.exec(t)?.[1]);

type Op =
  | { readonly kind: 'append'; readonly n: number; readonly pad: number }
  | { readonly kind: 'read'; readonly c: number }
  | { readonly kind: 'tick'; readonly ms: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('append' as const),
      n: fc.integer({ min: 0, max: 6 }),
      pad: fc.integer({ min: 0, max: 40 }),
    }),
  },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('read' as const), c: fc.integer({ min: 0, max: 3 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('tick' as const), ms: fc.integer({ min: 0, max: 250 }) }) },
);

interface ModelConsumer {
  /** toSeq of its last read */
  readUpTo: number;
  lastReadAt: number;
  received: number[];
  droppedTotal: number;
}

export const BUFFER_SCHEDULES = 1_000;

describe('relay event buffer against a model (1 000 schedules)', () => {
  it('exactly once, in order, per consumer; every loss counted to the consumer that lost it; bounds hold', () => {
    fc.assert(
      fc.property(
        fc.array(opArb, { minLength: 1, maxLength: 80 }),
        fc.record({
          maxEvents: fc.integer({ min: 1, max: 16 }),
          maxBytes: fc.integer({ min: 60, max: 1_500 }),
          consumerIdleMs: fc.integer({ min: 50, max: 400 }),
          retainReadMs: fc.integer({ min: 0, max: 200 }),
          maxConsumers: fc.integer({ min: 1, max: 4 }),
        }),
        (ops, options) => {
          const b = new EventBuffer(options);
          const known = new Map<string, ModelConsumer>();
          const everKnown = new Map<string, ModelConsumer>();
          let now = 0;
          let appended = 0;
          let resumeFrom = 0;
          for (const op of ops) {
            if (op.kind === 'tick') {
              now += op.ms;
              continue;
            }
            if (op.kind === 'append') {
              const items = Array.from({ length: op.n }, () => ev(appended++, op.pad));
              expect(b.append(items, now)).toBe(appended - op.n);
            } else {
              const name = `router-${op.c}`;
              // the model's idle-forget: every *other* consumer idle for longer than consumerIdleMs
              for (const [id, c] of known)
                if (id !== name && now - c.lastReadAt > options.consumerIdleMs) known.delete(id);
              // and the consumer bound: a newcomer past maxConsumers makes the longest-silent one forgotten
              let evictedConsumers = b.stats().evictedConsumers;
              if (!known.has(name) && known.size >= options.maxConsumers) {
                let oldest: string | null = null;
                for (const [id, c] of known)
                  if (oldest === null || c.lastReadAt < known.get(oldest)!.lastReadAt) oldest = id;
                known.delete(oldest!);
                evictedConsumers++;
              }
              const before = b.stats().retainedFrom;
              const r = b.read(name, now);
              expect(b.stats().evictedConsumers).toBe(evictedConsumers);
              // items are exactly seqs fromSeq..toSeq-1 (event ids equal relay seqs here), toSeq is everything appended
              expect(r.items.map(idOf)).toEqual(Array.from({ length: r.toSeq - r.fromSeq }, (_, k) => r.fromSeq + k));
              expect(r.toSeq).toBe(appended);
              let c = known.get(name);
              if (c !== undefined) {
                // continuing: no event twice, none skipped unless counted as dropped to this consumer
                expect(r.fromSeq).toBe(c.readUpTo + r.dropped);
              } else {
                // new (first, or joining beside others), or forgotten and back: resumes after what it last read
                const prior = everKnown.get(name)?.readUpTo;
                let start = known.size === 0 ? Math.min(resumeFrom, before) : before;
                if (prior !== undefined) start = prior; // what left the log since is lost to it, and counted
                expect(r.fromSeq).toBe(Math.max(start, before));
                expect(r.dropped).toBe(Math.max(0, before - start));
                c = everKnown.get(name) ?? { readUpTo: 0, lastReadAt: now, received: [], droppedTotal: 0 };
                known.set(name, c);
                everKnown.set(name, c);
              }
              c.received.push(...r.items.map(idOf));
              c.droppedTotal += r.dropped;
              c.readUpTo = r.toSeq;
              c.lastReadAt = now;
              resumeFrom = Math.min(...[...known.values()].map((k) => k.readUpTo));
            }
            const s = b.stats();
            expect(s.retainedEvents).toBeLessThanOrEqual(options.maxEvents);
            if (s.retainedEvents > 1) expect(s.retainedBytes).toBeLessThanOrEqual(options.maxBytes);
            expect(s.nextSeq).toBe(appended);
            expect(s.retainedFrom + s.retainedEvents).toBe(appended);
            expect(s.consumers.map((x) => x.consumer).sort()).toEqual([...known.keys()].sort());
            for (const x of s.consumers) expect(x.dropped).toBeLessThanOrEqual(s.evicted + appended);
          }
          // no consumer ever saw an event twice or out of order, across forgets and returns
          for (const c of everKnown.values()) {
            for (let k = 1; k < c.received.length; k++)
              expect(c.received[k]).toBeGreaterThan(c.received[k - 1] as number);
          }
          // without any eviction and without forgetting anyone, nobody lost anything
          const end = b.stats();
          if (end.evicted === 0 && end.expiredConsumers + end.evictedConsumers === 0)
            for (const c of everKnown.values()) expect(c.droppedTotal).toBe(0);
        },
      ),
      { numRuns: BUFFER_SCHEDULES },
    );
  });
});
