// Text and chat requests rendered with the model's tokenizer: the router-side ids predict the router, the worker's
// ids (CTX response) give the oracle, and their comparison gives render-drift (numbers from test/helpers/mini-cluster).
import { describe, expect, it } from 'vitest';
import type { MiniOptions } from '../../../test/helpers/mini-cluster.js';
import { auditMiniCluster } from '../../../test/helpers/mini-cluster-audit.js';

/** evaluated a millisecond after the last observation */
function audit(mini: MiniOptions) {
  return auditMiniCluster(mini, {}, 1);
}

describe('render parity in the state', () => {
  it("router-side ids equal to the worker's: predicted router matches, the oracle from the worker's ids, no render-drift", () => {
    const { snapshot, input } = audit({ routing: 'prefix', promptForm: 'rendered', trajectories: 30 });
    const d = input.decisions;
    expect(d.withKeys).toBe(180);
    expect(d.predictedAnyMatch).toBeGreaterThan(100);
    // the oracle waits for the worker's own ids: every decision joined there, none at decision time
    expect(d.withWorkerTokens).toBe(180);
    expect(d.oracleAnyMatch).toBeGreaterThan(100);
    expect(input.render).toMatchObject({
      compared: 180,
      rendered: 180,
      differing: 0,
      sample: null,
      differingServers: [],
    });
    expect(snapshot.findings.map((f) => f.id)).not.toContain('render-drift');
    expect(snapshot.findings.map((f) => f.id)).not.toContain('cache-signal-inert');
  });

  it('a doubled BOS on the router side: nothing predicted while workers hold prefixes, render-drift at position 1, inert names it', () => {
    const { snapshot, input } = audit({
      routing: 'random',
      promptForm: 'rendered',
      doubledBos: true,
      trajectories: 30,
    });
    const d = input.decisions;
    expect(d.predictedAnyMatch).toBe(0);
    // worker truth from the worker's ids still shows the prefixes the router could have used
    expect(d.oracleAnyMatch / d.withKeys).toBeGreaterThan(0.5);
    expect(input.render).toMatchObject({
      compared: 180,
      differing: 180,
      breaking: 180,
      minPosition: 1,
      differingServers: ['ctx0', 'ctx1', 'ctx2'],
    });
    const drift = snapshot.findings.find((f) => f.id === 'render-drift');
    expect(drift?.severity).toBe('critical');
    expect(drift?.evidence).toMatchObject({
      first_diverging_position: 1,
      likely_cause: 'doubled-bos/router',
      differing_share: 1,
    });
    const inert = snapshot.findings.find((f) => f.id === 'cache-signal-inert');
    expect(inert?.cause).toContain('render-drift');
    expect(inert?.cause).toContain('first difference at token 1');
  });
});
