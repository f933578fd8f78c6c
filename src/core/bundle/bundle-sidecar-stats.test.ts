import { describe, expect, it } from 'vitest';
import type { SidecarStatsObservation } from '../observe/observation.js';
import { noScanFallbacks } from '../relay/scan-fallback.js';
import { decodeBundleRecord, encodeBundleRecord } from './bundle-codec.js';
import { KeyHistory } from './bundle-keys.js';

const observation: SidecarStatsObservation = {
  kind: 'sidecar-stats',
  ts: 5_000,
  relays: [
    {
      server: 'ctx0',
      abandonedPolls: 2,
      capturesTruncated: 1,
      eventsEvicted: 30,
      consumersExpired: 1,
      consumersEvicted: 0,
      resumePositionsDiscarded: 4,
      readHistoryReleased: 11,
      upstreamRetries: 7,
      eventsRedelivered: 0,
      scanFallbacks: { ...noScanFallbacks(), inline: 12 },
    },
  ],
  streams: [
    {
      server: 'ctx1',
      rank: 1,
      batches: 40,
      replayedBatches: 3,
      replayRequests: 1,
      lostBatches: 2,
      gaps: 1,
      resets: 0,
      malformed: 5,
      unresolvedBlocks: 6,
      unmatchedRemovals: 8,
    },
  ],
  forwards: [
    { endpoint: 'tcp://127.0.0.1:5557', to: 'tcp://10.0.0.2:5557', forwarded: 40, failed: 1, connected: true },
  ],
  feed: { droppedFrames: 9, refusedClients: 1 },
};

const line = (o: unknown): string => JSON.stringify(o);
const decode = (text: string) => decodeBundleRecord(text, 3, new KeyHistory(8));

describe('sidecar-stats in a bundle', () => {
  it('round-trips every counter', () => {
    const text = encodeBundleRecord({ observation, digest: null }, new KeyHistory(8), false);
    expect(decode(text)).toEqual({ ok: true, record: { observation, digest: null } });
  });

  it('reads a bundle recorded before the read-history budget as none released', () => {
    const { readHistoryReleased: _absent, ...older } = observation.relays[0]!;
    const r = decode(line({ ...observation, relays: [older] }));
    expect(r.ok && r.record.observation.kind === 'sidecar-stats' && r.record.observation.relays[0]).toEqual({
      ...older,
      readHistoryReleased: 0,
    });
  });

  it.each([
    [
      'a negative count',
      { relays: [{ ...observation.relays[0], upstreamRetries: -1 }] },
      '$.relays[0].upstreamRetries',
    ],
    [
      'a negative read-history count',
      { relays: [{ ...observation.relays[0], readHistoryReleased: -2 }] },
      '$.relays[0].readHistoryReleased',
    ],
    [
      'a missing slow-path reason',
      { relays: [{ ...observation.relays[0], scanFallbacks: {} }] },
      '$.relays[0].scanFallbacks.inline',
    ],
    ['a rank that is not a number', { streams: [{ ...observation.streams[0], rank: 'one' }] }, '$.streams[0].rank'],
    [
      'connected not a boolean',
      { forwards: [{ ...observation.forwards[0], connected: 1 }] },
      '$.forwards[0].connected',
    ],
    ['no feed', { feed: null }, '$.feed'],
  ])('refuses %s, naming the field', (_what, change, path) => {
    const r = decode(line({ ...observation, ...change }));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.issue.message).toContain(path);
  });
});
