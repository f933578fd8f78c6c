// The router's kind (where it reads KV events: the pull endpoint, ZMQ streams, none) comes from the configuration,
// its type, its polls or the event path its workers serve — never from the sidecar's mode, so a live audit and the
// audit of its bundle (another mode) judge it alike. A router that reads no events is never blamed for not polling.
import { describe, expect, it } from 'vitest';
import { miniCluster, type MiniOptions } from '../../../test/helpers/mini-cluster.js';
import { routerConfig } from '../../../test/helpers/router-config.js';
import type { Observation } from '../observe/observation.js';
import { createSentinelState, type SentinelOptions } from './sentinel-state.js';

const THRESHOLDS = { minDecisions: 40, minFollowups: 30, minServerRequests: 10 };

function run(observations: readonly Observation[], mode: SentinelOptions['mode'] = 'relay') {
  const state = createSentinelState({ thresholds: THRESHOLDS, mode });
  for (const obs of observations) state.apply(obs);
  const now = observations.at(-1)!.ts;
  const snapshot = state.evaluate(now);
  return {
    input: state.diagnosisInput(now),
    snapshot,
    finding: (id: string) => snapshot.findings.find((f) => f.id === id),
  };
}

// a sticky router that never polls the relay, workers with events on, nothing stating the router's settings
const NEVER_POLLS: MiniOptions = { routing: 'sticky', routerPolls: false, routerSettings: false };

describe("the router's kind", () => {
  it('unknown and never polling: router-not-polling is a warning naming both readings, never critical', () => {
    const { input, finding, snapshot } = run(miniCluster(NEVER_POLLS));
    expect(input.router).toMatchObject({ readsEvents: null, readsEventsFrom: null, consumesEvents: true });
    expect(input.routerPollsExpected).toBe(true);
    expect(finding('router-not-polling')).toMatchObject({ severity: 'warning' });
    expect(finding('router-not-polling')!.summary).toContain('ConversationRouter');
    expect(finding('router-not-polling')!.fix).toContain('router.type');
    expect(snapshot.findings.filter((f) => f.severity === 'critical').map((f) => f.id)).not.toContain(
      'router-not-polling',
    );
  });

  it('stated to read the pull endpoint: the same run is critical', () => {
    const obs = [routerConfig({ readsEvents: 'pull' }), ...miniCluster(NEVER_POLLS)];
    const { input, finding } = run(obs);
    expect(input.router).toMatchObject({ readsEvents: 'pull', readsEventsFrom: 'stated' });
    expect(finding('router-not-polling')).toMatchObject({ severity: 'critical' });
  });

  it('a KV-cache-aware router (its type known) on workers serving the pull endpoint is expected to poll', () => {
    const { input, finding } = run(miniCluster({ routing: 'sticky', routerPolls: false }));
    expect(input.router).toMatchObject({ readsEvents: 'pull', readsEventsFrom: 'the event path' });
    expect(finding('router-not-polling')).toMatchObject({ severity: 'critical' });
  });

  it.each(['conversation', 'round_robin', 'load_balancing'])(
    '%s (router.type in the configuration): never asked to poll, no finding about its event path',
    (type) => {
      const obs = [routerConfig({ routerType: type }), ...miniCluster(NEVER_POLLS)];
      const { input, finding } = run(obs);
      expect(input.router).toMatchObject({
        readsEvents: 'none',
        readsEventsFrom: 'router type',
        consumesEvents: false,
      });
      expect(input.routerPollsExpected).toBe(false);
      expect(finding('router-not-polling')).toBeUndefined();
      expect(finding('event-signal-masked')).toBeUndefined();
    },
  );

  it('router.reads_events: none says the same without a type', () => {
    const { input, finding } = run([routerConfig({ readsEvents: 'none' }), ...miniCluster(NEVER_POLLS)]);
    expect(input.router).toMatchObject({ readsEvents: 'none', consumesEvents: false });
    expect(finding('router-not-polling')).toBeUndefined();
  });

  it("a router that polls is learned from its polls, whatever the sidecar's mode", () => {
    const obs = miniCluster({ routing: 'sticky', routerSettings: false });
    for (const mode of ['relay', 'auto'] as const)
      expect(run(obs, mode).input.router).toMatchObject({ readsEvents: 'pull', readsEventsFrom: 'its polls' });
  });

  it('the verdict and findings do not depend on the mode (live relay vs the audit of its bundle)', () => {
    for (const mini of [NEVER_POLLS, { routing: 'sticky', routerPolls: false } as MiniOptions]) {
      const obs = miniCluster(mini);
      const live = run(obs, 'relay');
      const bundle = run(obs, 'auto');
      expect(bundle.snapshot.verdict).toBe(live.snapshot.verdict);
      expect(bundle.snapshot.findings.map((f) => [f.id, f.severity])).toEqual(
        live.snapshot.findings.map((f) => [f.id, f.severity]),
      );
    }
  });
});
