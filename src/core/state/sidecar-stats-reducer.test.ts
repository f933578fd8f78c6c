import { describe, expect, it } from 'vitest';
import type { SidecarStatsObservation } from '../observe/observation.js';
import { NO_SIDECAR_STATS } from '../observe/sidecar-stats.js';
import { relayCounters } from '../../../test/helpers/snapshot-fixture.js';
import { createSentinelState } from './sentinel-state.js';

const relay = (server: string, abandonedPolls: number) => relayCounters(server, { abandonedPolls });

const stats = (ts: number, over: Partial<SidecarStatsObservation> = {}): SidecarStatsObservation => ({
  kind: 'sidecar-stats',
  ts,
  relays: [],
  streams: [],
  forwards: [],
  feed: { droppedFrames: 0, refusedClients: 0 },
  ...over,
});

describe('sidecar stats reducer (through the state)', () => {
  it('holds nothing before the first sidecar-stats observation', () => {
    expect(createSentinelState().snapshot(0).sidecar).toEqual(NO_SIDECAR_STATS);
  });

  it('replaces the picture with each later observation: a stream that went away is gone', () => {
    const state = createSentinelState();
    const rank = {
      server: 'ctx1',
      rank: 0,
      batches: 5,
      replayedBatches: 0,
      replayRequests: 0,
      lostBatches: 1,
      gaps: 1,
      resets: 0,
      malformed: 0,
      unresolvedBlocks: 0,
      unmatchedRemovals: 0,
    };
    state.apply(
      stats(1_000, { relays: [relay('ctx0', 1)], streams: [rank], feed: { droppedFrames: 2, refusedClients: 0 } }),
    );
    expect(state.snapshot(1_000).sidecar.streams).toEqual([rank]);
    state.apply(stats(2_000, { relays: [relay('ctx0', 3)] }));
    const s = state.snapshot(2_000).sidecar;
    expect(s.relays).toEqual([relay('ctx0', 3)]);
    expect(s.streams).toEqual([]);
    expect(s.feed).toEqual({ droppedFrames: 0, refusedClients: 0 });
  });

  it('keeps the later counts when an older observation arrives after them (counters never go back)', () => {
    const state = createSentinelState();
    state.apply(stats(2_000, { relays: [relay('ctx0', 3)] }));
    state.apply(stats(1_000, { relays: [relay('ctx0', 1)] }));
    expect(state.snapshot(2_000).sidecar.relays).toEqual([relay('ctx0', 3)]);
  });

  it('adds no server: the snapshot lists only servers observed otherwise', () => {
    const state = createSentinelState();
    state.apply(stats(1_000, { relays: [relay('ctx0', 1)] }));
    expect(state.snapshot(1_000).servers).toEqual([]);
  });
});
