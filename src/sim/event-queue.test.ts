import { describe, expect, it } from 'vitest';
import type { KvEventData } from '../core/wire/kv-event.js';
import { WorkerEventQueue, type EventQueueOptions } from './event-queue.js';

const removed = (n: number): KvEventData => ({ type: 'removed', blockHashes: [BigInt(n)] });

function queue(options: Partial<EventQueueOptions> = {}): WorkerEventQueue {
  return new WorkerEventQueue({
    ranks: 4,
    bufferMaxSize: 100,
    push: false,
    adpGatherDrop: false,
    gatherDelayMs: 5,
    windowSize: 4096,
    ...options,
  });
}

describe('WorkerEventQueue', () => {
  it('numbers events per rank from 0 and gathers ranks ≠ 0 into rank 0 after the gather period', () => {
    const q = queue();
    q.emit(0, removed(1), 0);
    q.emit(1, removed(2), 0);
    q.emit(0, removed(3), 1);
    q.emit(1, removed(4), 2);
    expect(q.drain(3).map((e) => [e.attentionDpRank, e.eventId])).toEqual([
      [0, 0],
      [0, 1],
    ]);
    expect(q.drain(5).map((e) => [e.attentionDpRank, e.eventId])).toEqual([[1, 0]]);
    expect(q.drain(7).map((e) => [e.attentionDpRank, e.eventId])).toEqual([[1, 1]]);
  });

  it('is destructive: a second drain returns []', () => {
    const q = queue();
    q.emit(0, removed(1), 0);
    expect(q.drain(0)).toHaveLength(1);
    expect(q.drain(0)).toEqual([]);
  });

  it('drops the oldest events beyond event_buffer_max_size × ranks', () => {
    const q = queue({ ranks: 1, bufferMaxSize: 3 });
    for (let i = 0; i < 5; i++) q.emit(0, removed(i), i);
    const events = q.drain(10);
    expect(events.map((e) => e.eventId)).toEqual([2, 3, 4]);
    expect(events.every((e) => e.attentionDpRank === null && e.windowSize === 4096)).toBe(true);
    expect(q.stats.dropped).toBe(2);
  });

  it('event_buffer_max_size 0: no manager, no ids, always []', () => {
    const q = queue({ bufferMaxSize: 0 });
    q.emit(0, removed(1), 0);
    expect(q.drain(100)).toEqual([]);
    expect(q.stats.emitted).toBe(0);
  });

  it('push mode: ids are used but the pull path returns []', () => {
    const q = queue({ push: true });
    q.emit(0, removed(1), 0);
    q.emit(2, removed(1), 0);
    expect(q.drain(100)).toEqual([]);
    expect(q.stats.emitted).toBe(2);
  });

  it('adp_gather_drop: only rank 0 arrives', () => {
    const q = queue({ adpGatherDrop: true });
    for (let r = 0; r < 4; r++) q.emit(r, removed(r), 0);
    expect(q.drain(100).map((e) => e.attentionDpRank)).toEqual([0]);
  });

  it('reset (restart) starts ids from 0 again and forgets queued events', () => {
    const q = queue({ ranks: 1 });
    q.emit(0, removed(1), 0);
    q.emit(0, removed(2), 0);
    q.reset();
    q.emit(0, removed(3), 1);
    expect(q.drain(1).map((e) => e.eventId)).toEqual([0]);
  });
});
