// Acceptance "record then audit --bundle on the same run gives the same findings as the live audit", on the
// simulator: one virtual-time run feeds a live state and a bundle writer at once; the bundle is then audited offline.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { auditBundle } from '../../src/app/audit/bundle-audit.js';
import { buildAuditReport } from '../../src/core/report/audit-report.js';
import { createSentinelState } from '../../src/core/state/sentinel-state.js';
import { BundleWriter } from '../../src/outputs/bundle-writer.js';
import { runVirtual } from '../../src/sim/run-virtual.js';
import { presetConfig } from '../../src/sim/sim-config.js';
import { REDUCED_SCALE } from '../helpers/fault-matrix-rows.js';

describe('record → audit --bundle on a simulated run', () => {
  it.each([
    ['seed', 'relay', ['router.max_batch_size=8']],
    ['healthy', 'relay', ['router.token_drift=true']],
    ['seed', 'watch', ['router.max_batch_size=8']],
  ] as const)('%s %s %j: same findings, evidence and stats offline as live', async (preset, tap, set) => {
    const dir = join(mkdtempSync(join(tmpdir(), 'kvs-rec-')), 'bundle');
    const writer = await BundleWriter.create(dir, { mode: tap, meta: { preset, set: set.join(' ') } });
    const live = createSentinelState({ mode: tap });
    let last = 0;
    let observations = 0;
    runVirtual(presetConfig(preset, [...REDUCED_SCALE, ...set]), {
      tap,
      onObservation: (obs) => {
        live.apply(obs);
        writer.write(obs);
        observations++;
        last = Math.max(last, obs.ts);
      },
    });
    await writer.close();
    const liveReport = buildAuditReport(live.evaluate(last), {
      kind: 'live',
      description: 'live',
      observations,
      malformed: 0,
    });
    const offline = await auditBundle(dir);
    expect(offline.source.observations).toBe(observations);
    expect(offline.source.malformed).toBe(0);
    expect(offline.findings).toEqual(liveReport.findings);
    expect(offline.stats).toEqual(liveReport.stats);
    expect(offline.servers).toEqual(liveReport.servers);
    expect(offline.verdict).toBe(liveReport.verdict);
  });
});
