import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { auditBundle } from '../../src/app/audit/bundle-audit.js';
import { buildAuditReport } from '../../src/core/report/audit-report.js';
import { createSentinelState } from '../../src/core/state/sentinel-state.js';
import { BundleWriter } from '../../src/outputs/bundle-writer.js';
import { miniCluster, type MiniOptions } from '../helpers/mini-cluster.js';

async function recordAndAudit(mini: MiniOptions, includePrompts = false) {
  const observations = miniCluster(mini);
  const live = createSentinelState({ mode: 'relay' });
  for (const obs of observations) live.apply(obs);
  const liveReport = buildAuditReport(live.evaluate(observations.at(-1)!.ts), {
    kind: 'live',
    description: 'test',
    observations: observations.length,
    malformed: 0,
  });
  const dir = join(mkdtempSync(join(tmpdir(), 'kvs-bundle-')), 'b');
  const writer = await BundleWriter.create(dir, { mode: 'relay', includePrompts, meta: { source: 'mini-cluster' } });
  for (const obs of observations) writer.write(obs);
  const manifest = await writer.close();
  const offline = await auditBundle(dir);
  return { dir, manifest, liveReport, offline };
}

const strip = (r: {
  findings: readonly { id: string; severity: string; servers: readonly string[]; evidence: unknown }[];
}) => r.findings.map((f) => ({ id: f.id, severity: f.severity, servers: f.servers, evidence: f.evidence }));

describe('record → audit --bundle', () => {
  it.each<[string, MiniOptions]>([
    ['healthy', { routing: 'sticky', trajectories: 60 }],
    ['tokens_per_block mismatch, random routing', { routing: 'random', routerTokensPerBlock: 8, trajectories: 60 }],
    ['events absent', { routing: 'random', events: false, trajectories: 60 }],
    ['drift', { routing: 'random', drift: true, trajectories: 60 }],
    // no source states the router's tokens_per_block: inferred from the recorded digests exactly as live
    [
      'router settings unknown, tokens_per_block inferred',
      { routing: 'prefix', routerSettings: false, blockSize: 64, routerTokensPerBlock: 64, trajectories: 30 },
    ],
    [
      'router settings unknown, router chunking 32 over 64-token blocks',
      { routing: 'prefix', routerSettings: false, blockSize: 64, routerTokensPerBlock: 32, trajectories: 30 },
    ],
  ])('%s: the offline audit gives the live findings, evidence and stats', async (_name, mini) => {
    const { liveReport, offline, manifest } = await recordAndAudit(mini);
    expect(manifest.complete).toBe(true);
    expect(offline.verdict).toBe(liveReport.verdict);
    expect(strip(offline)).toEqual(strip(liveReport));
    expect(offline.stats).toEqual(liveReport.stats);
    expect(offline.servers).toEqual(liveReport.servers);
    if (mini.routerSettings === false)
      expect(offline.stats.router_tokens_per_block).toBe(
        mini.routerTokensPerBlock === mini.blockSize ? mini.blockSize : null,
      );
  });

  it('keeps prompts out of the bundle unless asked', async () => {
    const { dir } = await recordAndAudit({ routing: 'sticky', trajectories: 5, turns: 2 });
    const text = readFileSync(join(dir, 'observations.jsonl'), 'utf8');
    expect(text).not.toContain('"tokens":[');
    expect(text).toContain('"promptTokens":null');
    const withPrompts = await recordAndAudit({ routing: 'sticky', trajectories: 5, turns: 2 }, true);
    expect(readFileSync(join(withPrompts.dir, 'observations.jsonl'), 'utf8')).toContain('"tokens":[');
  });

  it('refuses to write into a non-empty directory', async () => {
    const { dir } = await recordAndAudit({ routing: 'sticky', trajectories: 2, turns: 1 });
    await expect(BundleWriter.create(dir, { mode: 'relay' })).rejects.toThrow(/not empty/);
  });
});
