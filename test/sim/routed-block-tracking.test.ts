// kvsentinel's replica of the router's table against the simulated router's own (issue #24.3): the newest router
// adds the hashes it routed on a successful finish (track_routed_blocks, on by default), the 2026-06 one with
// backfill_block_hashes_on_finish; events fill it only on the servers it polls. kvsentinel learns the version and
// block size from the orchestrator log as the newest logger prints it (no debug endpoint, no stated settings), and
// then predicts, decision by decision, the very matched tokens the router reports for every candidate.
import { describe, expect, it } from 'vitest';
import type { Observation, RouterScoreObservation } from '../../src/core/observe/observation.js';
import type { DecisionJoin } from '../../src/core/state/joined-events.js';
import { createSentinelState } from '../../src/core/state/sentinel-state.js';
import { parseOrchestratorLogLine } from '../../src/core/watch/orchestrator-log.js';
import { createServerResolver } from '../../src/core/watch/server-resolver.js';
import { runVirtual, serverIds } from '../../src/sim/run-virtual.js';
import { presetConfig } from '../../src/sim/sim-config.js';
import { REDUCED_SCALE } from '../helpers/fault-matrix-rows.js';
import { routerConfig } from '../helpers/router-config.js';

function replicate(preset: 'healthy' | 'seed', set: readonly string[], stated: readonly Observation[] = []) {
  const config = presetConfig(preset, [...REDUCED_SCALE, ...set]);
  const logLines: string[] = [];
  const observations: Observation[] = [];
  const scores: RouterScoreObservation[] = [];
  const result = runVirtual(config, {
    tap: 'relay',
    orchestratorLog: (l) => logLines.push(l),
    onObservation: (o) => {
      // the router's own view is the yardstick, not an input: no debug endpoint, no settings from the simulator
      if (o.kind === 'router-score') scores.push(o);
      else if (o.kind !== 'router-state' && !(o.kind === 'router-config' && o.source === 'simulator'))
        observations.push(o);
    },
  });
  const resolve = createServerResolver(Object.fromEntries(serverIds(config.ctx.servers).map((s) => [s, []])));
  const state = createSentinelState({ mode: 'relay' });
  const joins = new Map<string, DecisionJoin>();
  state.subscribe((e) => {
    if (e.kind === 'decision') joins.set(e.observation.requestId, e.join);
  });
  // what the operator states, then the orchestrator's start-up lines, as they come in its log
  for (const o of stated) state.apply(o);
  for (const line of logLines) for (const o of parseOrchestratorLogLine(line, 0, resolve)) state.apply(o);
  for (const o of observations) state.apply(o);
  const snapshot = state.evaluate(observations.at(-1)!.ts);
  let compared = 0;
  let differing = 0;
  for (const score of scores) {
    const join = joins.get(score.requestId);
    if (join === undefined) continue;
    for (const c of score.candidates) {
      compared++;
      if (join.candidates.find((j) => j.server === c.server)?.predictedTokens !== c.matchedTokens) differing++;
    }
  }
  return { result, snapshot, compared, differing };
}

describe("the router replica holds what the router's own table holds", () => {
  it.each([
    [
      'newest, tokens_per_block 32 vs 128 (polling skipped: routed blocks only)',
      'healthy',
      ['router.tokens_per_block=32'],
    ],
    ['newest, events off, tokens_per_block unset (adopts 128)', 'seed', ['router.tokens_per_block=0']],
    ['newest, events on, tokens_per_block unset (events and routed blocks)', 'healthy', ['router.tokens_per_block=0']],
  ] as const)('%s', (_name, preset, set) => {
    const { result, snapshot, compared, differing } = replicate(preset, ['router.profile=newest', ...set]);
    expect(snapshot.routerTokensPerBlock.from).toBe('orchestrator-log');
    for (const s of result.servers) {
      const ours = snapshot.servers.find((x) => x.server === s.server)!.routerTableBlocks;
      expect(s.routerBlockTableSize, s.server).toBeGreaterThan(0);
      expect(ours, s.server).toBe(s.routerBlockTableSize);
    }
    expect(compared).toBeGreaterThan(100);
    expect(differing).toBe(0);
  });

  it('2026-06 with backfill_block_hashes_on_finish (stated in the config: no router.py line logs it), events off', () => {
    const { result, snapshot, compared, differing } = replicate(
      'seed',
      ['router.tokens_per_block=128', 'router.backfill_block_hashes_on_finish=true'],
      [routerConfig({ backfillBlockHashesOnFinish: true, profile: '2026-06' })],
    );
    for (const s of result.servers)
      expect(snapshot.servers.find((x) => x.server === s.server)!.routerTableBlocks, s.server).toBe(
        s.routerBlockTableSize,
      );
    expect(compared).toBeGreaterThan(100);
    expect(differing).toBe(0);
  });
});
