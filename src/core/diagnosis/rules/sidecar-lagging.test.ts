import { describe, expect, it } from 'vitest';
import type { DiagnosisInput } from '../rule.js';
import { runRules } from '../run-rules.js';
import { QUIET_SIDECAR, quietInput, quietServer } from '../../../../test/helpers/diagnosis-input.js';
import { RULES } from './index.js';

/** the hits the rules raise, with their ids */
function findingsOf(input: DiagnosisInput) {
  return [...runRules(RULES, input).hits].map(([id, hit]) => ({ id, ...hit }));
}

const streamed = (server: string, gaps: number, sidecarGaps: number) =>
  quietServer(server, {
    streamed: true,
    gaps,
    missedEvents: gaps * 10,
    sidecarGaps,
    sidecarMissed: sidecarGaps * 10,
    ranks: [{ rank: 0, stated: false, events: 900, gaps, missedEvents: gaps * 10, resets: 0, lastEventId: 899 }],
  });

const lagged = {
  ...QUIET_SIDECAR,
  lagIntervals: 3,
  laggingMs: 3_000,
  worstEventLoopDelayMs: 1_200,
  worstUtilization: 1,
};

describe('sidecar-lagging', () => {
  it('takes the stream gaps its own lag explains: no event-queue-shared, the loss is its own', () => {
    const input = quietInput({ sidecar: lagged, servers: [streamed('ctx0', 5, 5), quietServer('ctx1')] });
    const f = findingsOf(input);
    expect(f.map((x) => x.id)).toContain('sidecar-lagging');
    expect(f.map((x) => x.id)).not.toContain('event-queue-shared');
    const lag = f.find((x) => x.id === 'sidecar-lagging');
    expect(lag?.servers).toEqual(['ctx0']);
    expect(lag?.evidence).toMatchObject({ sidecar_gaps: 5, sidecar_missed: 50, lagging_now: false });
    expect(lag?.summary).toMatch(/kvsentinel's own loss, not the deployment's/);
  });

  it('leaves the gaps it does not explain to event-queue-shared', () => {
    const f = findingsOf(quietInput({ sidecar: lagged, servers: [streamed('ctx0', 5, 2), quietServer('ctx1')] }));
    const shared = f.find((x) => x.id === 'event-queue-shared');
    expect(shared?.evidence.stream_gaps).toBe(3);
    expect(f.map((x) => x.id)).toContain('sidecar-lagging');
  });

  it('holds back the findings that need every event while it is behind, and names them', () => {
    const input = quietInput({
      sidecar: { ...lagged, laggingNow: true },
      servers: [streamed('ctx0', 5, 2), quietServer('ctx1')],
    });
    const f = findingsOf(input);
    expect(f.map((x) => x.id)).not.toContain('event-queue-shared');
    expect(f.find((x) => x.id === 'sidecar-lagging')?.evidence.held_back).toBe('event-queue-shared');
    // the same gaps once it has caught up: the deployment's, and shown
    expect(findingsOf({ ...input, sidecar: lagged }).map((x) => x.id)).toContain('event-queue-shared');
  });

  it("takes the gaps a backlogged subscriber lost, its loop on time: named by the backlog, none the deployment's", () => {
    const behind = { ...QUIET_SIDECAR, worstBacklogMs: 3_400 };
    const f = findingsOf(quietInput({ sidecar: behind, servers: [streamed('ctx0', 4, 4), quietServer('ctx1')] }));
    expect(f.map((x) => x.id)).not.toContain('event-queue-shared');
    const lag = f.find((x) => x.id === 'sidecar-lagging');
    expect(lag?.evidence).toMatchObject({ worst_backlog_ms: 3_400, lag_intervals: 0, sidecar_gaps: 4 });
    expect(lag?.summary).toMatch(/a ZMQ subscriber's queue held a backlog for up to 3\.4 s/);
    expect(lag?.summary).not.toMatch(/event loop/);
  });

  it('says nothing, and holds nothing back, for a late loop that lost nothing', () => {
    expect(findingsOf(quietInput({ sidecar: lagged })).map((x) => x.id)).not.toContain('sidecar-lagging');
    expect(findingsOf(quietInput({ sidecar: { ...lagged, laggingNow: true } })).map((x) => x.id)).not.toContain(
      'sidecar-lagging',
    );
  });
});
