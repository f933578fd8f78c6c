import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BODY_VIEWS, EventBuffer, serializeEventItems } from './event-buffer.js';
import { splitJsonArrayBytes } from './split-json-array.js';

const ev = (n: number): string =>
  `{"event_id":${n},"data":{"type":"removed","block_hashes":[18446744073709551${String(n).padStart(3, '0')}]}}`;

describe('EventBuffer', () => {
  it('keeps read events for retainReadMs so a replica joining a moment later gets the stream from the start', () => {
    const b = new EventBuffer({ retainReadMs: 1_000 });
    b.append([ev(0), ev(1)], 0);
    expect(b.read('a', 10).items).toHaveLength(2);
    expect(b.read('b', 500)).toMatchObject({ fromSeq: 0, items: [ev(0), ev(1)], dropped: 0 });
    b.append([ev(2)], 1_500);
    b.read('a', 2_000);
    b.read('b', 2_000);
    // both read everything; the first two are older than the retention and released, ev(2) is not yet
    expect(b.stats()).toMatchObject({ retainedFrom: 2, retainedEvents: 1 });
    expect(b.read('c', 2_100)).toMatchObject({ fromSeq: 2, items: [ev(2)], dropped: 0 });
    b.read('a', 3_000);
    expect(b.stats()).toMatchObject({ retainedFrom: 3, retainedEvents: 0 });
  });

  it('gives the first consumer everything since start, then only what is new', () => {
    const b = new EventBuffer({ retainReadMs: 0 });
    expect(b.append([ev(0), ev(1)], 0)).toBe(0);
    expect(b.read('router', 1)).toEqual({
      consumer: 'router',
      fromSeq: 0,
      toSeq: 2,
      items: [ev(0), ev(1)],
      dropped: 0,
    });
    expect(b.read('router', 2).items).toEqual([]);
    expect(b.append([ev(2)], 0)).toBe(2);
    expect(b.read('router', 3)).toMatchObject({ fromSeq: 2, toSeq: 3, items: [ev(2)] });
    const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);
    expect(new TextDecoder().decode(serializeEventItems([bytes(ev(0)), bytes(ev(1))]))).toBe(`[${ev(0)},${ev(1)}]`);
    expect(new TextDecoder().decode(serializeEventItems([]))).toBe('[]');
  });

  it('serves each consumer the full stream independently', () => {
    const b = new EventBuffer({ retainReadMs: 0 });
    b.append([ev(0)], 0);
    expect(b.read('a', 0).items).toEqual([ev(0)]);
    b.append([ev(1)], 0);
    // b joins late: starts at the oldest retained event, nothing counted as dropped
    expect(b.read('b', 0)).toMatchObject({ items: [ev(1)], dropped: 0 });
    b.append([ev(2)], 0);
    expect(b.read('a', 0).items).toEqual([ev(1), ev(2)]);
    expect(b.read('b', 0).items).toEqual([ev(2)]);
    expect(b.stats().retainedEvents).toBe(0);
  });

  it('drops the oldest events of an overflowing backlog and tells that consumer how many', () => {
    const b = new EventBuffer({ maxEvents: 3, retainReadMs: 0 });
    b.read('slow', 0);
    b.read('fast', 0);
    b.append([ev(0), ev(1)], 0);
    expect(b.read('fast', 0).items).toEqual([ev(0), ev(1)]);
    b.append([ev(2), ev(3), ev(4)], 0);
    expect(b.read('fast', 0).items).toEqual([ev(2), ev(3), ev(4)]);
    const slow = b.read('slow', 0);
    expect(slow).toMatchObject({ fromSeq: 2, toSeq: 5, items: [ev(2), ev(3), ev(4)], dropped: 2 });
    expect(b.read('slow', 0).dropped).toBe(0);
    const stats = b.stats();
    expect(stats.evicted).toBe(2);
    expect(stats.consumers.find((c) => c.consumer === 'slow')).toMatchObject({ dropped: 2, delivered: 3 });
  });

  it('counts events evicted before the first poll as dropped for the first consumer', () => {
    const b = new EventBuffer({ maxEvents: 2 });
    b.append([ev(0), ev(1), ev(2)], 0);
    expect(b.read('router', 0)).toMatchObject({ fromSeq: 1, items: [ev(1), ev(2)], dropped: 1 });
  });

  it('counts evictions for a consumer that returns after being forgotten', () => {
    const b = new EventBuffer({ consumerIdleMs: 100, maxEvents: 2, retainReadMs: 0 });
    b.append([ev(0)], 0);
    b.read('router', 0);
    b.read('router', 500); // nothing new; still known
    b.append([ev(1), ev(2), ev(3)], 0);
    b.read('other', 1_000); // forgets 'router' (idle), joins as the only consumer: starts where router stopped
    // router never got 1 (evicted), 2 and 3 (released once 'other' read them): back, it is told it lost all three
    expect(b.read('router', 1_001)).toMatchObject({ fromSeq: 4, items: [], dropped: 3 });
    const fresh = new EventBuffer({ consumerIdleMs: 100, maxEvents: 2, retainReadMs: 0 });
    fresh.append([ev(0)], 0);
    fresh.read('router', 0);
    fresh.append([ev(1), ev(2), ev(3)], 0);
    expect(fresh.read('router', 1_000)).toMatchObject({ items: [ev(2), ev(3)], dropped: 1 });
    fresh.append([ev(4), ev(5), ev(6)], 0);
    // forgotten meanwhile (the reader below is the first after the idle time): back with the loss counted
    expect(fresh.read('router2', 2_000)).toMatchObject({ items: [ev(5), ev(6)], dropped: 1 });
  });

  it('bounds retained bytes but keeps at least the newest event', () => {
    const b = new EventBuffer({ maxBytes: ev(0).length * 2 });
    b.append([ev(0), ev(1), ev(2)], 0);
    expect(b.stats()).toMatchObject({ retainedEvents: 2, retainedFrom: 1 });
    const big = 'x'.repeat(ev(0).length * 5);
    b.append([big], 0);
    expect(b.stats()).toMatchObject({ retainedEvents: 1, retainedBytes: big.length });
  });

  it('copies out the items it keeps of a body it dropped part of, and only those', () => {
    const body = (events: string[]): Uint8Array[] => {
      const split = splitJsonArrayBytes(new TextEncoder().encode(`[${events.join(',')}]`));
      if (!split.ok) throw new Error(split.issue.message);
      return split.items;
    };
    const big = `{"event_id":0,"pad":"${'x'.repeat(200)}"}`;
    const b = new EventBuffer<Uint8Array>({ maxBytes: big.length + 40, retainReadMs: 0 }, undefined, BODY_VIEWS);
    const first = body([big, '{"event_id":1}']);
    b.append(first, 0);
    const second = body(['{"event_id":2}', '{"event_id":3}']);
    b.append(second, 0); // over the bound: the big event goes, event 1 stays without its body
    const read = b.read('router', 0);
    expect(read.items.map((i) => Buffer.from(i).toString())).toEqual([
      '{"event_id":1}',
      '{"event_id":2}',
      '{"event_id":3}',
    ]);
    expect(read.items[0]!.buffer).not.toBe(first[1]!.buffer);
    expect(read.items[0]!.buffer.byteLength).toBe('{"event_id":1}'.length);
    // a body kept whole stays one allocation
    expect(read.items[1]!.buffer).toBe(second[0]!.buffer);
    expect(read.items[2]!.buffer).toBe(second[0]!.buffer);
  });

  it('forgets idle consumers so they stop pinning the log', () => {
    const b = new EventBuffer({ consumerIdleMs: 100, retainReadMs: 0 });
    b.read('gone', 0);
    b.read('live', 0);
    b.append([ev(0)], 0);
    b.read('live', 50);
    expect(b.stats().retainedEvents).toBe(1);
    b.read('live', 200);
    expect(b.stats().consumers.map((c) => c.consumer)).toEqual(['live']);
    expect(b.stats()).toMatchObject({ retainedEvents: 0, expiredConsumers: 1 });
  });

  it('delivers every appended event exactly once, in order, to every consumer that never overflows', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('append' as const), n: fc.integer({ min: 0, max: 4 }) }),
      fc.record({ kind: fc.constant('read' as const), c: fc.integer({ min: 0, max: 2 }) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), fc.integer({ min: 1, max: 12 }), (ops, maxEvents) => {
        const b = new EventBuffer({ maxEvents, retainReadMs: 0 });
        const got: string[][] = [[], [], []];
        const dropped = [0, 0, 0];
        let next = 0;
        for (const c of [0, 1, 2]) b.read(`c${c}`, 0);
        for (const o of ops) {
          if (o.kind === 'append') {
            const items = Array.from({ length: o.n }, () => ev(next++));
            b.append(items, 0);
          } else {
            const r = b.read(`c${o.c}`, 0);
            got[o.c]?.push(...r.items);
            dropped[o.c] = (dropped[o.c] ?? 0) + r.dropped;
          }
        }
        for (const c of [0, 1, 2]) {
          const r = b.read(`c${c}`, 0);
          got[c]?.push(...r.items);
          dropped[c] = (dropped[c] ?? 0) + r.dropped;
          const seen = got[c] ?? [];
          // in order, no duplicates, and delivered + dropped = all, with drops only at the front of gaps
          expect(seen.length + (dropped[c] ?? 0)).toBe(next);
          const ids = seen.map((t) => Number(/"event_id":(\d+)/.exec(t)?.[1]));
          for (let k = 1; k < ids.length; k++) expect(ids[k]).toBeGreaterThan(ids[k - 1] as number);
        }
      }),
      { numRuns: 300 },
    );
  });
});
