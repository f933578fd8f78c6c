// `kvsentinel demo` end to end, as a user runs it: the live simulator behind relay sidecars, the web server live
// during the run, then the audit. These two runs are also the live-driver rows of the fault matrix (the virtual-time
// rows are test/integration/fault-matrix.test.ts): seed (events off, router tokens_per_block 32) → inert with
// cache-signal-inert and the findings naming its causes; the fixed configuration → healthy.
// --duration 35s: the seed's findings hold after ~10 s of traffic on an idle machine; a loaded 2-core machine runs
// the simulator 3–4× slower, and the assertions on request and follow-up counts check the evidence was enough.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers/paths.js';

interface DemoRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** /metrics fetched while the demo ran (null: never reachable) */
  readonly metrics: string | null;
  readonly landing: string | null;
  readonly seconds: number;
}

function runDemo(args: readonly string[], metricsWanted: RegExp): Promise<DemoRun> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(repoRoot, 'dist/cli/main.js'), 'demo', ...args], {
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 110_000,
    });
    let stdout = '';
    let stderr = '';
    let metrics: string | null = null;
    let landing: string | null = null;
    let polling = false;
    const poll = async (base: string): Promise<void> => {
      // the web server is live during the run: poll /metrics until the wanted series shows (or the demo ends)
      while (child.exitCode === null) {
        try {
          const body = await (await request(`${base}/metrics`)).body.text();
          metrics = body;
          if (metricsWanted.test(body)) {
            landing = await (await request(`${base}/`)).body.text();
            return;
          }
        } catch {
          // not up yet, or already stopped
        }
        await new Promise((r) => setTimeout(r, 1_000));
      }
    };
    const onText = (): void => {
      const m = /landing page (http:\/\/[\d.]+:\d+)\//.exec(stdout + stderr);
      if (m !== null && !polling) {
        polling = true;
        void poll(m[1]!);
      }
    };
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      onText();
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      onText();
    });
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({ code, stdout, stderr, metrics, landing, seconds: (Date.now() - started) / 1000 }),
    );
  });
}

interface AuditJson {
  verdict: string;
  findings: {
    id: string;
    severity: string;
    servers: string[];
    evidence: Record<string, unknown>;
    cause: string;
    fix: string;
  }[];
  stats: { requests: number; cache_hit_ratio: number | null; turn_scatter_ratio: number | null };
  source: { kind: string; observations: number };
}

describe('kvsentinel demo (live simulator + relay sidecar; the live-driver rows of the fault matrix)', () => {
  it('seed: inert, cache-signal-inert, and the causes (events-absent, tokens-per-block-mismatch) with their fixes; exit 0', async () => {
    const run = await runDemo(
      ['--duration', '35s', '--json'],
      /kvsentinel_finding_active\{id="cache-signal-inert",severity="critical"\} 1/,
    );
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as AuditJson;
    const ids = report.findings.map((f) => f.id);
    expect(report.verdict).toBe('inert');
    expect(ids).toEqual(
      expect.arrayContaining([
        'cache-signal-inert',
        'events-absent',
        'tokens-per-block-mismatch',
        'router-table-empty',
      ]),
    );
    const byId = new Map(report.findings.map((f) => [f.id, f]));
    expect(byId.get('events-absent')!.fix).toContain('kv_cache_config.event_buffer_max_size');
    expect(byId.get('tokens-per-block-mismatch')!.fix).toContain('tokens_per_block: 128');
    expect(byId.get('cache-signal-inert')!.servers).toEqual(['ctx0', 'ctx1', 'ctx2']);
    // enough evidence: the statistical findings need 60 decisions and 40 follow-ups
    expect(report.stats.requests).toBeGreaterThan(150);
    expect(report.source.kind).toBe('live');
    // --json keeps stdout to the report; the URLs, progress and where-to-look lines are on stderr
    expect(run.stderr).toMatch(/faults: ctx\.event_buffer_max_size=0 router\.tokens_per_block=32/);
    expect(run.stderr).toMatch(
      /^\s+\d+ s {2}requests [\d,]+ {2}cache hit [\d.]+% {2}verdict (healthy|degraded|inert) {2}findings: /m,
    );
    expect(run.stderr).toMatch(/kvsentinel tail ws:\/\/127\.0\.0\.1:\d+\/ws/);
    expect(run.stderr).toContain('While it ran');
    // the web server was live: the finding showed on /metrics and on the landing page during the run
    expect(run.metrics).toMatch(/kvsentinel_finding_active\{id="cache-signal-inert",severity="critical"\} 1/);
    expect(run.metrics).toMatch(/kvsentinel_finding_active\{id="events-absent",severity="critical"\} 1/);
    expect(run.landing).toContain('cache-signal-inert');
    expect(run.seconds).toBeLessThan(100);
  }, 120_000);

  it('--fixed: events on, router tokens_per_block 128, max_batch_size 512 → healthy, no findings; text report', async () => {
    const run = await runDemo(['--fixed', '--duration', '35s'], /kvsentinel_requests_total\{server="ctx0"\} [1-9]/);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(
      'the fixed configuration (events on, router tokens_per_block 128, max_batch_size 512); no faults',
    );
    expect(run.stdout).toContain('Verdict: HEALTHY');
    expect(run.stdout).toContain('No findings.');
    const requests = Number(/Stats: {3}requests ([\d,]+)/.exec(run.stdout)?.[1]?.replace(/,/g, '') ?? 0);
    expect(requests).toBeGreaterThan(150);
    // the signal is alive: every server's events reached the router's table
    const servers = run.stdout.slice(run.stdout.indexOf('Servers'));
    for (const id of ['ctx0', 'ctx1', 'ctx2'])
      expect(servers).toMatch(
        new RegExp(`${id}\\s+[1-9][\\d,]*\\s+[\\d.]+%\\s+[\\d,]+\\s+[1-9][\\d,]*\\s+[\\d,]+\\s+[1-9]`),
      );
    expect(run.stdout).toMatch(/While it ran, the sidecar served its landing page at http:\/\/127\.0\.0\.1:\d+\//);
    expect(run.metrics).toMatch(/kvsentinel_up\{source="relay:ctx0"\} 1/);
    expect(run.seconds).toBeLessThan(100);
  }, 120_000);

  it('bad flags exit 2 naming the flag', async () => {
    const run = await runDemo(['--duration', 'soon'], /never/);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--duration');
    const set = await runDemo(['--set', 'router.nope=1'], /never/);
    expect(set.code).toBe(2);
    expect(set.stderr).toContain('router.nope');
  });
});
