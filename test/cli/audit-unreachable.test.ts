// `audit --ctx` against a worker nothing listens on: the audit ends with a source-unreachable finding naming it, and
// evidence-insufficient points at that source before "send traffic"; both it and `record` exit 5 (unreachable).
import { mkdtempSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/run-cli.js';

async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as { port: number };
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

describe('audit of an unreachable --ctx', () => {
  it('reports source-unreachable within a short window', async () => {
    const port = await closedPort();
    const run = await runCli(['audit', '--ctx', `ctx0=http://127.0.0.1:${port}`, '--duration', '5s', '--json']);
    const report = JSON.parse(run.stdout) as { findings: { id: string; summary: string; fix: string }[] };
    const ids = report.findings.map((f) => f.id);
    expect(ids).toContain('source-unreachable');
    expect(report.findings.find((f) => f.id === 'source-unreachable')?.summary).toContain('server-info:ctx0');
    const insufficient = report.findings.find((f) => f.id === 'evidence-insufficient');
    expect(insufficient?.fix).toMatch(/^make server-info:ctx0 reachable/);
    // nothing about the router at --fail-on: the audit could not see, and says so in its exit code
    expect(run.code).toBe(5);
  });

  it('record: the bundle is written, the partial recording said, exit 5', async () => {
    const port = await closedPort();
    const out = join(mkdtempSync(join(tmpdir(), 'kvs-rec-unreachable-')), 'bundle');
    const run = await runCli(['record', '--ctx', `ctx0=http://127.0.0.1:${port}`, '--duration', '5s', '--out', out]);
    expect(run.stderr).toMatch(/recorded \d+ observations/);
    expect(run.stderr).toMatch(/the bundle is partial: cannot read server-info:ctx0/);
    expect(readdirSync(out)).toContain('manifest.json');
    expect(run.code).toBe(5);
  });
});
