import { describe, expect, it, vi } from 'vitest';
import { BACKLOG_GRACE_MS, BACKLOG_MS, IDLE_CONFIRM_MS, LOOK_EVERY, SocketBacklog } from './socket-backlog.js';

describe('SocketBacklog', () => {
  it('is behind only once its queue has not been found empty for BACKLOG_MS, and for a grace after it empties', () => {
    const b = new SocketBacklog();
    b.seen(true, 1_000);
    expect(b.behindMs(1_000 + BACKLOG_MS - 1)).toBeNull();
    b.seen(true, 1_500);
    expect(b.behindMs(1_000 + BACKLOG_MS)).toBe(BACKLOG_MS);
    b.seen(false, 3_000);
    // the hole was queued behind the backlog: a gap that shows just after it emptied is still its loss
    expect(b.behindMs(3_000 + BACKLOG_GRACE_MS)).toBe(2_000);
    expect(b.behindMs(3_000 + BACKLOG_GRACE_MS + 1)).toBeNull();
  });

  it('calls a burst that empties within BACKLOG_MS keeping up', () => {
    const b = new SocketBacklog();
    b.seen(true, 0);
    b.seen(false, BACKLOG_MS - 1);
    b.seen(true, BACKLOG_MS);
    expect(b.behindMs(BACKLOG_MS + 10)).toBeNull();
    expect(b.behindMs(2 * BACKLOG_MS - 1)).toBeNull();
  });

  it('looks at the socket once every LOOK_EVERY messages', () => {
    const b = new SocketBacklog();
    let looks = 0;
    const socket = {
      get readable(): boolean {
        looks++;
        return true;
      },
    };
    let now = 0;
    for (let i = 0; i < 10 * LOOK_EVERY; i++) b.taken(() => (now += 1), socket);
    expect(looks).toBe(10);
    expect(b.behindMs(now + BACKLOG_MS)).not.toBeNull();
  });

  it("decides a gap that showed early in a backlog once the queue does: ours if it lasts, upstream's if it empties", () => {
    const ours = new SocketBacklog();
    const told: (number | null)[] = [];
    ours.seen(true, 0);
    ours.whenKnown(300, (behind) => told.push(behind));
    ours.seen(true, BACKLOG_MS - 1);
    expect(told).toEqual([]);
    ours.seen(true, BACKLOG_MS + 5);
    expect(told).toEqual([BACKLOG_MS + 5]);

    const upstream = new SocketBacklog();
    const toldUpstream: (number | null)[] = [];
    upstream.seen(true, 0);
    upstream.whenKnown(300, (behind) => toldUpstream.push(behind));
    upstream.seen(false, 400);
    expect(toldUpstream).toEqual([null]);

    // with the queue empty at the last look, or behind already, it is told at once
    const now: (number | null)[] = [];
    upstream.whenKnown(500, (behind) => now.push(behind));
    ours.whenKnown(BACKLOG_MS + 10, (behind) => now.push(behind));
    expect(now).toEqual([null, BACKLOG_MS + 10]);
  });

  it('looks between messages without asking the socket: a loop still waiting, nothing taken, finds it empty', () => {
    vi.useFakeTimers();
    try {
      const b = new SocketBacklog();
      const told: (number | null)[] = [];
      let now = 0;
      const clock = (): number => now;
      b.seen(true, 0);
      b.whenKnown(100, (behind) => told.push(behind));
      const socket = { readable: true };
      // not waiting (busy with a message): nothing to look at
      b.idleLook(clock);
      vi.advanceTimersByTime(IDLE_CONFIRM_MS);
      expect(told).toEqual([]);
      // waiting, but a message was taken before the look was confirmed: zeromq's put-off read, not an empty queue
      b.waiting = true;
      b.idleLook(clock);
      b.taken(clock, socket);
      vi.advanceTimersByTime(IDLE_CONFIRM_MS);
      expect(told).toEqual([]);
      // waiting, then busy when the look is confirmed: nothing known either
      b.idleLook(clock);
      b.waiting = false;
      vi.advanceTimersByTime(IDLE_CONFIRM_MS);
      expect(told).toEqual([]);
      // waiting, and still waiting with nothing taken: the queue emptied before the backlog counted, upstream's loss
      b.waiting = true;
      now = 800;
      b.idleLook(clock);
      vi.advanceTimersByTime(IDLE_CONFIRM_MS - 1);
      expect(told).toEqual([]);
      vi.advanceTimersByTime(1);
      expect(told).toEqual([null]);
      expect(now).toBeLessThan(BACKLOG_MS);
    } finally {
      vi.useRealTimers();
    }
  });
});
