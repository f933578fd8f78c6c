// `audit --ctx` against a worker nothing listens on: the audit ends with a source-unreachable finding naming it, and
// evidence-insufficient points at that source before "send traffic".
import { createServer } from 'node:net';
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
});
