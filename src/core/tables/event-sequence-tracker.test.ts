import { describe, expect, it } from 'vitest';
import { removed, stored } from '../../../test/helpers/kv-event-builders.js';
import { EventSequenceTracker, type SequenceObservation } from './event-sequence-tracker.js';

const obs = (kind: SequenceObservation['kind'], missing = 0, first = false): SequenceObservation => ({
  kind,
  missing,
  first,
});

describe('EventSequenceTracker', () => {
  it.each<[string, number[], SequenceObservation[]]>([
    ['consecutive ids', [0, 1, 2], [obs('ok', 0, true), obs('ok'), obs('ok')]],
    ['a gap', [0, 1, 5, 6], [obs('ok', 0, true), obs('ok'), obs('gap', 3), obs('ok')]],
    ['a duplicate', [0, 1, 1, 2], [obs('ok', 0, true), obs('ok'), obs('duplicate'), obs('ok')]],
    ['a restart to 0', [0, 1, 2, 0, 1], [obs('ok', 0, true), obs('ok'), obs('ok'), obs('reset', 0), obs('ok')]],
    ['a restart seen mid-life', [5, 6, 2, 3], [obs('gap', 5, true), obs('ok'), obs('reset', 2), obs('ok')]],
    ['joining late', [40, 41], [obs('gap', 40, true), obs('ok')]],
  ])('%s', (_name, ids, expected) => {
    const tracker = new EventSequenceTracker();
    expect(ids.map((id) => tracker.observe('s', 0, id))).toEqual(expected);
  });

  it('keeps counters per (server, rank): ids repeat across ranks', () => {
    const tracker = new EventSequenceTracker();
    for (const id of [0, 1, 2]) tracker.observe('s', 0, id);
    for (const id of [0, 1, 2]) expect(tracker.observe('s', 1, id).kind).toBe('ok');
    expect(tracker.observe('t', 0, 0).kind).toBe('ok');
    tracker.observe('s', 1, 7); // gap of 4
    tracker.observe('s', 1, 7); // duplicate
    tracker.observe('s', 1, 0); // reset
    const [r0, r1] = tracker.ranks('s');
    expect(r0).toMatchObject({
      attentionDpRank: 0,
      events: 3,
      gaps: 0,
      missedEvents: 0,
      resets: 0,
      lastEventId: 2,
      expectedEventId: 3,
    });
    expect(r1).toMatchObject({
      attentionDpRank: 1,
      events: 6,
      gaps: 1,
      missedEvents: 4,
      resets: 1,
      duplicates: 1,
      lastEventId: 0,
    });
    expect(tracker.ranks().map((r) => `${r.server}/${r.attentionDpRank}`)).toEqual(['s/0', 's/1', 't/0']);
  });

  it('counts event types per rank and which ranks were seen', () => {
    const tracker = new EventSequenceTracker();
    tracker.observeEvent('s', stored([1n], { rank: 0, eventId: 0 }));
    tracker.observeEvent('s', removed([1n], { rank: 0, eventId: 1 }));
    tracker.observeEvent('s', stored([2n], { rank: 3, eventId: 0 }));
    expect(tracker.seenRanks('s')).toEqual([0, 3]);
    expect(tracker.seenRanks('nobody')).toEqual([]);
    const [r0, r3] = tracker.ranks('s');
    expect(r0?.eventsByType).toEqual({ created: 0, stored: 1, removed: 1, updated: 0, all_cleared: 0 });
    expect(r3?.eventsByType.stored).toBe(1);
    expect(r0?.rankStated).toBe(true);
  });

  it('tracks a non-ADP worker as rank 0 without a stated rank, and unnumbered items apart', () => {
    const tracker = new EventSequenceTracker();
    expect(tracker.observeEvent('s', stored([1n], { eventId: 0 }))).toEqual(obs('ok', 0, true));
    expect(tracker.observeEvent('s', stored([2n]))).toEqual(obs('unnumbered'));
    expect(tracker.observe('s', null, 1)).toEqual(obs('ok'));
    expect(tracker.ranks('s')).toEqual([
      expect.objectContaining({ attentionDpRank: 0, rankStated: false, events: 3, unnumbered: 1, firstEventId: 0 }),
    ]);
    tracker.forgetServer('s');
    expect(tracker.ranks()).toEqual([]);
  });
});
