import { describe, expect, it } from 'vitest';
import { serverTotals } from './server-totals.js';
import type { RankStats } from './snapshot.js';

function rank(overrides: Partial<RankStats>): RankStats {
  return {
    rank: 0,
    eventsByType: { created: 0, stored: 0, removed: 0, updated: 0, all_cleared: 0 },
    gaps: 0,
    resets: 0,
    missedEvents: 0,
    lastEventId: null,
    blocksByLevel: {},
    ...overrides,
  };
}

describe('serverTotals', () => {
  it('sums events of every type, gaps, resets and blocks at every level over the ranks', () => {
    const server = {
      ranks: [
        rank({
          eventsByType: { created: 1, stored: 5, removed: 2, updated: 0, all_cleared: 3 },
          gaps: 1,
          resets: 0,
          blocksByLevel: { 0: 10, 1: 4 },
        }),
        rank({
          rank: 1,
          eventsByType: { created: 0, stored: 3, removed: 0, updated: 0, all_cleared: 0 },
          gaps: 2,
          resets: 1,
          blocksByLevel: { 0: 6 },
        }),
      ],
    };
    expect(serverTotals(server)).toEqual({ events: 14, gaps: 3, resets: 1, workerBlocks: 20 });
  });

  it('is all zero for a server without ranks', () => {
    expect(serverTotals({ ranks: [] })).toEqual({
      events: 0,
      gaps: 0,
      resets: 0,
      workerBlocks: 0,
    });
  });
});
