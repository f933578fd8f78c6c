import { describe, expect, it } from 'vitest';
import { EventBuffer } from './event-buffer.js';
import { ReadRetentionPool } from './read-retention.js';

// every event 100 bytes, so budgets read as event counts
const ev = (n: number): string => `{"event_id":${String(n).padStart(4, '0')}}`.padEnd(100, ' ');

describe('ReadRetentionPool', () => {
  it('splits the budget equally among the relays that joined, and gives a leaver its part back once', () => {
    const pool = new ReadRetentionPool(1_200);
    const a = pool.join();
    expect(a.limitBytes()).toBe(1_200);
    const b = pool.join();
    const c = pool.join();
    expect([a.limitBytes(), b.limitBytes(), c.limitBytes()]).toEqual([400, 400, 400]);
    c.leave();
    c.leave();
    expect(pool.members).toBe(2);
    expect(a.limitBytes()).toBe(600);
    pool.resize(300);
    expect(b.limitBytes()).toBe(150);
    expect(() => pool.resize(-1)).toThrow(/retain_read_bytes/);
  });
});

describe('EventBuffer with a read-history share', () => {
  it('releases read events past its share before retainReadMs, and counts them', () => {
    const pool = new ReadRetentionPool(1_000);
    const b = new EventBuffer({ retainReadMs: 60_000 }, undefined, null, pool.join());
    b.append(
      Array.from({ length: 25 }, (_, i) => ev(i)),
      0,
    );
    expect(b.read('router', 1).items).toHaveLength(25);
    // read by every consumer and within retain_read, but 2,500 bytes against a share of 1,000: the oldest 15 go
    b.append([], 2);
    expect(b.stats()).toMatchObject({
      retainedFrom: 15,
      retainedEvents: 10,
      retainedBytes: 1_000,
      releasedForBudget: 15,
    });
    // a replica joining now starts at the oldest event kept
    expect(b.read('replica', 3)).toMatchObject({ fromSeq: 15, dropped: 0 });
  });

  it('never releases an event a consumer has not read, whatever the budget', () => {
    const pool = new ReadRetentionPool(100);
    const b = new EventBuffer({ retainReadMs: 60_000 }, undefined, null, pool.join());
    b.read('router', 0);
    b.read('slow', 0);
    b.append(
      Array.from({ length: 20 }, (_, i) => ev(i)),
      1,
    );
    b.read('router', 2);
    // 'slow' has read none of them: all 20 stay (its backlog is bounded by maxBytes, not by the read budget)
    expect(b.stats()).toMatchObject({ retainedEvents: 20, releasedForBudget: 0 });
    expect(b.read('slow', 3).items).toHaveLength(20);
    expect(b.stats()).toMatchObject({ retainedEvents: 1, releasedForBudget: 19 });
  });

  it("shrinks a relay's history when another relay joins the budget, at its next append", () => {
    const pool = new ReadRetentionPool(2_000);
    const first = new EventBuffer({ retainReadMs: 60_000 }, undefined, null, pool.join());
    first.append(
      Array.from({ length: 20 }, (_, i) => ev(i)),
      0,
    );
    first.read('router', 1);
    expect(first.stats().retainedEvents).toBe(20);
    const second = pool.join();
    first.append([ev(20)], 2);
    // 2,100 bytes against 1,000 now: the 11 oldest read ones go, the unread ev(20) stays
    expect(first.stats()).toMatchObject({ retainedFrom: 11, retainedEvents: 10, releasedForBudget: 11 });
    second.leave();
    first.append([ev(21)], 3);
    first.read('router', 4);
    expect(first.stats()).toMatchObject({ retainedEvents: 11, releasedForBudget: 11 });
  });

  it('without a share keeps read events for retainReadMs up to maxBytes, as before', () => {
    const b = new EventBuffer({ retainReadMs: 60_000 });
    b.append(
      Array.from({ length: 25 }, (_, i) => ev(i)),
      0,
    );
    b.read('router', 1);
    b.append([], 2);
    expect(b.stats()).toMatchObject({ retainedEvents: 25, releasedForBudget: 0 });
  });
});
