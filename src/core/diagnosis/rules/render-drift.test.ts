import { describe, expect, it } from 'vitest';
import { BLIND_PREFERENCE, quietDecisions, quietInput } from '../../../../test/helpers/diagnosis-input.js';
import { DOUBLED_BOS_DIFF } from '../../../../test/helpers/render-diffs.js';
import type { RenderDiff } from '../../render/compare-renders.js';
import type { DiagnosisInput, RenderDiagnosis } from '../rule.js';
import { runRules } from '../run-rules.js';
import { RULES } from './index.js';
import { renderDrift } from './render-drift.js';

const doubledBos = DOUBLED_BOS_DIFF;

function render(over: Partial<RenderDiagnosis>): RenderDiagnosis {
  return {
    compared: 100,
    rendered: 100,
    differing: 0,
    breaking: 0,
    firstBlock: 0,
    causes: [],
    differingServers: [],
    minPosition: null,
    sample: null,
    ...over,
  };
}

const drifting = (over: Partial<RenderDiagnosis> = {}): DiagnosisInput =>
  quietInput({
    render: render({
      differing: 100,
      breaking: 100,
      firstBlock: 100,
      causes: [{ cause: 'doubled-bos', side: 'router', requests: 100 }],
      minPosition: 1,
      sample: { ts: 1, server: 'ctx0', diff: doubledBos },
      ...over,
    }),
  });

describe('render-drift', () => {
  it('stays silent when the ids agree, and on too few comparisons', () => {
    expect(renderDrift.evaluate(quietInput({ render: render({}) }))).toBeNull();
    expect(renderDrift.evaluate(drifting({ compared: 9, differing: 9, breaking: 9 }))).toBeNull();
    // 2% of requests differing is tolerated (a rare client quirk), 3% is not
    expect(renderDrift.evaluate(drifting({ differing: 2, breaking: 2 }))).toBeNull();
    expect(renderDrift.evaluate(drifting({ differing: 3, breaking: 3 }))?.severity).toBe('warning');
  });

  it('is critical when the difference costs most router matches, with ids and the cause as evidence', () => {
    const hit = renderDrift.evaluate(drifting())!;
    expect(hit.severity).toBe('critical');
    expect(hit.summary).toContain('first at token 1');
    expect(hit.evidence).toMatchObject({
      first_diverging_position: 1,
      likely_cause: 'doubled-bos/router',
      router_ids_from_position: '0: 0,0,3476,477',
      worker_ids_from_position: '0: 0,3476,477,11502',
      differing_share: 1,
      first_block_differs_share: 1,
      router_ids_from: 'tokenizer',
    });
    expect(hit.cause).toContain('BOS twice on the router side');
    // no server named: every server the router routes to
    expect(hit.servers).toEqual(['ctx0', 'ctx1', 'ctx2']);
    expect(renderDrift.evaluate(drifting({ differingServers: ['ctx1'] }))?.servers).toEqual(['ctx1']);
  });

  it('is a warning when only the tail differs (matches mostly intact)', () => {
    const tail: RenderDiff = {
      ...doubledBos,
      position: 4000,
      routerSpan: 0,
      workerSpan: 1,
      commonSuffix: 0,
      cause: 'generation-prompt',
      side: 'worker',
    };
    const hit = renderDrift.evaluate(
      drifting({
        breaking: 0,
        firstBlock: 0,
        causes: [{ cause: 'generation-prompt', side: 'worker', requests: 100 }],
        sample: { ts: 1, server: 'ctx0', diff: tail },
      }),
    )!;
    expect(hit.severity).toBe('warning');
    expect(hit.cause).toContain('add_generation_prompt');
  });

  it('makes cache-signal-inert name the drift as its cause', () => {
    // routing blind to the cache, as a router whose lookups all miss is
    const inert = quietDecisions({ predictedAnyMatch: 0, preference: BLIND_PREFERENCE });
    const withDrift = runRules(RULES, { ...drifting(), decisions: inert }).hits;
    expect(withDrift.get('cache-signal-inert')?.cause).toMatch(
      /render-drift: 100\.0% of requests, first difference at token 1; likely BOS twice on the router side/,
    );
    const without = runRules(RULES, quietInput({ decisions: inert })).hits;
    expect(without.get('cache-signal-inert')?.cause).not.toContain('render-drift');
  });
});
