// `audit --report FILE.html`, as a user runs it: live from relay sources for --duration (a fake CTX worker behind
// the relay, completions flowing), and the usage error when the file cannot be written.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { startFakeCtxWorker } from '../helpers/fake-ctx-worker.js';
import { runCli } from '../helpers/run-cli.js';
import { writeSimBundle } from '../helpers/sim-bundle.js';
import { cleanupsAfterEach, freePort } from '../helpers/test-resources.js';

const cleanups = cleanupsAfterEach();

describe('audit --report', () => {
  it('live: the report of the window, its verdict and findings as in the JSON, plots over the window', async () => {
    const worker = await startFakeCtxWorker({ autoEvents: true });
    cleanups.push(() => worker.close());
    const port = await freePort();
    const file = join(mkdtempSync(join(tmpdir(), 'kvs-audit-report-')), 'live.html');
    const audit = runCli(
      ['audit', '--relay', `ctx0=${worker.url}@127.0.0.1:${port}`, '--duration', '4s', '--report', file, '--json'],
      { timeoutMs: 60_000 },
    );
    let finished = false;
    void audit.finally(() => (finished = true));
    let sent = 0;
    while (!finished) {
      try {
        const r = await request(`http://127.0.0.1:${port}/v1/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'm', prompt: [1, 2, 3, 4, 5, 6, 7, 8], max_tokens: 1 }),
        });
        await r.body.text();
        sent++;
      } catch {
        // the relay is not listening yet, or already stopped
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    const run = await audit;
    expect(run.code, run.stderr).toBeLessThanOrEqual(1);
    expect(sent).toBeGreaterThan(5);
    const json = JSON.parse(run.stdout) as { verdict: string; findings: { id: string }[]; stats: { requests: number } };
    const html = readFileSync(file, 'utf8');
    expect(html).toContain(`data-verdict="${json.verdict}"`);
    for (const f of json.findings) expect(html).toContain(`data-finding="${f.id}"`);
    expect(html).toContain('live sources for 4 s (relay:ctx0');
    // sampled every second over the window: the event and decision plots have intervals
    expect(Number(/data-chart="kv-events" data-points="(\d+)"/.exec(html)?.[1] ?? 0)).toBeGreaterThanOrEqual(2);
    expect(Number(/data-chart="decisions" data-points="(\d+)"/.exec(html)?.[1] ?? 0)).toBeGreaterThanOrEqual(2);
    expect(html).not.toContain('<script');
  });

  it('a file it cannot write is exit 6 naming --report, after the audit ran', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'kvs-audit-report-')), 'bundle');
    await writeSimBundle(dir, 'healthy', ['workload.trajectories=20']);
    const run = await runCli(['audit', '--bundle', dir, '--report', join(dir, 'no-such-dir', 'r.html')]);
    expect(run.code).toBe(6);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(/^kvsentinel( audit)?: --report .*no-such-dir\/r\.html: cannot write the report: /);
  });
});
