// A bundle recorded from a late-joined ZMQ subscription audits the same as the live run: the history-incomplete
// change round-trips, and the state it feeds reports the same gap.
import { describe, expect, it } from 'vitest';
import { createSentinelState } from '../state/sentinel-state.js';
import { decodeBundleRecord, encodeBundleRecord, type BundleRecord } from './bundle-codec.js';
import { KeyHistory } from './bundle-keys.js';

describe('bundles of a stream joined late', () => {
  it('round-trip history-incomplete, and the replayed state reports it per server and rank', () => {
    const record: BundleRecord = {
      observation: {
        kind: 'stream-sequence',
        ts: 1_000,
        server: 'pod0',
        rank: 1,
        change: 'history-incomplete',
        lost: 20,
        filled: 10,
      },
      digest: null,
    };
    const history = new KeyHistory(64);
    const decoded = decodeBundleRecord(encodeBundleRecord(record, history, false), 1, history);
    if (!decoded.ok) throw new Error(decoded.issue.message);
    expect(decoded.record.observation).toEqual(record.observation);
    const live = createSentinelState({ mode: 'auto' });
    const replayed = createSentinelState({ mode: 'auto' });
    live.apply(record.observation);
    replayed.apply(decoded.record.observation);
    const gaps = (s: typeof live) =>
      s.diagnosisInput(2_000).servers.find((x) => x.server === 'pod0')?.historyIncomplete;
    expect(gaps(replayed)).toEqual([{ rank: 1, since: 1_000, missingBatches: 20, removedSince: 0 }]);
    expect(gaps(replayed)).toEqual(gaps(live));
  });

  it('refuses an unknown stream change, naming the field', () => {
    const history = new KeyHistory(64);
    const line = '{"kind":"stream-sequence","ts":1,"server":"a","rank":0,"change":"lost","lost":1,"filled":0}';
    const decoded = decodeBundleRecord(line, 7, history);
    expect(decoded.ok).toBe(false);
    if (!decoded.ok) expect(decoded.issue.message).toContain('change');
  });
});
