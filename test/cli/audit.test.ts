import { appendFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Observation } from '../../src/core/observe/observation.js';
import { BundleWriter } from '../../src/outputs/bundle-writer.js';
import { miniCluster, type MiniOptions } from '../helpers/mini-cluster.js';
import { runCli } from '../helpers/run-cli.js';

async function bundle(mini: MiniOptions, extra: readonly Observation[] = []): Promise<string> {
  const dir = join(mkdtempSync(join(tmpdir(), 'kvs-audit-')), 'bundle');
  const writer = await BundleWriter.create(dir, { mode: 'relay' });
  for (const obs of [...extra, ...miniCluster(mini)]) writer.write(obs);
  await writer.close();
  return dir;
}

describe('kvsentinel audit --bundle', () => {
  let inert = '';
  let healthy = '';
  beforeAll(async () => {
    inert = await bundle({ routing: 'random', events: false, trajectories: 80 });
    healthy = await bundle({ routing: 'sticky', trajectories: 80 });
  });

  it('prints the JSON contract of design.md §7 and exits 1 on findings', async () => {
    const run = await runCli(['audit', '--bundle', inert, '--json']);
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout) as {
      verdict: string;
      findings: { id: string; severity: string; servers: string[]; evidence: object; fix: string }[];
      stats: Record<string, unknown>;
    };
    expect(report.verdict).toBe('inert');
    expect(report.findings.map((f) => f.id)).toEqual(expect.arrayContaining(['events-absent', 'cache-signal-inert']));
    for (const f of report.findings)
      expect(Object.keys(f)).toEqual(expect.arrayContaining(['id', 'severity', 'servers', 'evidence', 'fix']));
    expect(Object.keys(report.stats)).toEqual(
      expect.arrayContaining(['requests', 'cache_hit_ratio', 'oracle_hit_ratio', 'turn_scatter_ratio']),
    );
    expect(report.stats.requests).toBe(480);
  });

  it('text report: verdict, findings, evidence table and fixes, without colour when NO_COLOR is set', async () => {
    const run = await runCli(['audit', '--bundle', inert]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('Verdict: INERT');
    expect(run.stdout).toContain('CRITICAL cache-signal-inert');
    expect(run.stdout).toMatch(/Evidence\n\s+finding\s+measure\s+value/);
    expect(run.stdout).toMatch(/Fixes\n\s+1\. /);
    expect(run.stdout).toContain('kv_cache_config.event_buffer_max_size');
    // eslint-disable-next-line no-control-regex
    expect(run.stdout).not.toMatch(/\u001b\[/);
  });

  it('a healthy bundle exits 0', async () => {
    const run = await runCli(['audit', '--bundle', healthy]);
    expect(run.stdout).toContain('Verdict: HEALTHY');
    expect(run.code).toBe(0);
  });

  it('--fail-on decides the exit code', async () => {
    const critical = await runCli(['audit', '--bundle', inert, '--fail-on', 'critical', '--json']);
    expect(critical.code).toBe(1);
    // a source down for the whole run: one warning, nothing critical
    const warningOnly = await bundle({ routing: 'sticky', trajectories: 80 }, [
      { kind: 'source-health', ts: 0, source: 'router-debug', up: false, error: 'ECONNREFUSED' },
    ]);
    const onCritical = await runCli(['audit', '--bundle', warningOnly, '--fail-on', 'critical', '--json']);
    expect((JSON.parse(onCritical.stdout) as { findings: { id: string }[] }).findings.map((f) => f.id)).toEqual([
      'source-unreachable',
    ]);
    expect(onCritical.code).toBe(0);
    const onWarning = await runCli(['audit', '--bundle', warningOnly]);
    expect(onWarning.stdout).toContain('Verdict: DEGRADED');
    expect(onWarning.code).toBe(5); // the one finding at --fail-on: a source unreachable
    const onInfo = await runCli(['audit', '--bundle', healthy, '--fail-on', 'info']);
    expect(onInfo.code).toBe(0);
  });

  it('usage errors exit 2, a missing bundle 4, with one line', async () => {
    const missing = await runCli(['audit', '--bundle', join(tmpdir(), 'no-such-bundle-kvs')]);
    expect(missing.code).toBe(4);
    expect(missing.stderr).toMatch(/--bundle .*no-such-bundle-kvs: no such directory/);
    const badSeverity = await runCli(['audit', '--bundle', inert, '--fail-on', 'fatal']);
    expect(badSeverity.code).toBe(2);
    const nothing = await runCli(['audit']);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toContain('--bundle DIR');
  });

  it('counts malformed lines and still audits the rest', async () => {
    const dir = await bundle({ routing: 'random', events: false, trajectories: 80 });
    appendFileSync(join(dir, 'observations.jsonl'), '{"kind":"outcome"\n{"kind":"decision","ts":"x"}\n');
    const run = await runCli(['audit', '--bundle', dir, '--json']);
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout) as { source: { malformed: number }; verdict: string };
    expect(report.source.malformed).toBe(2);
    expect(report.verdict).toBe('inert');
  });
});
