// `kvsentinel demo` end to end, as a user runs it: the live simulator behind relay sidecars, the web server live
// during the run, then the audit. These two runs are also the live-driver rows of the fault matrix (the virtual-time
// rows are test/integration/fault-matrix.test.ts): seed (events off, router tokens_per_block 32) → inert with
// cache-signal-inert and the findings naming its causes; the fixed configuration → healthy.
// Each run warms the cold cluster up (the default 1 200 requests) and ends once its steady-state window holds 1 500
// requests (--measure; --duration only caps it): that window's hit ratio is the bug report's, ~90 % for the seed and
// ~96 % fixed, within 2 points (issue #27 item 5). The window is counted in requests, not seconds, so a loaded
// machine only takes longer; the two runs go side by side (one core each) to keep the file's time down.
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
}

function runDemo(args: readonly string[], metricsWanted: RegExp): Promise<DemoRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(repoRoot, 'dist/cli/main.js'), 'demo', ...args], {
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: RUN_TIMEOUT_MS,
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
    child.on('close', (code) => resolve({ code, stdout, stderr, metrics, landing }));
  });
}

/**
 * the steady-state window each run measures, and the cap on its traffic: a loaded machine drives ~10–20 requests/s
 * (a run ends as soon as its window is measured, so the cap costs time only on a machine that slow)
 */
const MEASURE = ['--measure', '1500', '--duration', '6m'] as const;
const RUN_TIMEOUT_MS = 410_000;
/** the seed's findings exactly: the verdict's causes, and what the dead signal costs */
const SEED_FINDINGS = [
  'cache-signal-inert',
  'events-absent',
  'hit-rate-below-oracle',
  'router-table-empty',
  'tokens-per-block-mismatch',
  'turn-scatter-high',
];

interface SteadyStateJson {
  warmup_target_requests: number;
  warmup_requests: number;
  warmup_seconds: number;
  requests: number;
  seconds: number;
  cache_hit_ratio: number | null;
  stickiness: number | null;
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
  steady_state?: SteadyStateJson;
}

describe('kvsentinel demo (live simulator + relay sidecar; the live-driver rows of the fault matrix)', () => {
  it.concurrent(
    'seed: inert, cache-signal-inert, and the causes (events-absent, tokens-per-block-mismatch) with their fixes; steady-state hit ~90 %; exit 0',
    async () => {
      const run = await runDemo(
        [...MEASURE, '--json'],
        /kvsentinel_finding_active\{id="cache-signal-inert",severity="critical"\} 1/,
      );
      expect(run.code, run.stderr).toBe(0);
      const report = JSON.parse(run.stdout) as AuditJson;
      const ids = report.findings.map((f) => f.id);
      expect(report.verdict).toBe('inert');
      // the warm-up changes what is measured, never what is found: the seed's findings, no more and no fewer
      expect([...ids].sort()).toEqual(SEED_FINDINGS);
      // the steady state after the warm-up is the bug report's: ~90 % (89.6 % in its table), within 2 points
      const steady = report.steady_state!;
      expect(steady, run.stderr).toBeDefined();
      expect(steady.warmup_target_requests).toBe(1200);
      expect(steady.warmup_requests).toBeGreaterThanOrEqual(1200);
      expect(steady.requests).toBeGreaterThanOrEqual(1500);
      expect(steady.cache_hit_ratio! * 100).toBeGreaterThanOrEqual(88);
      expect(steady.cache_hit_ratio! * 100).toBeLessThanOrEqual(92);
      // measured from what the sidecar saw: the whole run's counters hold the warm-up and the window
      expect(report.stats.requests).toBeGreaterThanOrEqual(steady.warmup_requests + steady.requests);
      expect(report.stats.cache_hit_ratio!).toBeLessThan(steady.cache_hit_ratio!);
      expect(run.stderr).toMatch(/warm-up done: [\d,]+ requests in \d+ s \(cache hit since the cold start [\d.]+%\)/);
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
        /^\s+\d+ s {2}requests [\d,]+ {2}cache hit [\d.]+% {2}warm-up [\d,]+\/1,200 {2}verdict (healthy|degraded|inert) {2}findings: /m,
      );
      expect(run.stderr).toMatch(
        /^\s+\d+ s {2}requests [\d,]+ {2}cache hit [\d.]+% {2}steady-state hit [\d.]+% {2}verdict inert {2}findings: /m,
      );
      expect(run.stderr).toMatch(/kvsentinel tail ws:\/\/127\.0\.0\.1:\d+\/ws/);
      expect(run.stderr).toContain('While it ran');
      // the web server was live: the finding showed on /metrics and on the landing page during the run
      expect(run.metrics).toMatch(/kvsentinel_finding_active\{id="cache-signal-inert",severity="critical"\} 1/);
      expect(run.metrics).toMatch(/kvsentinel_finding_active\{id="events-absent",severity="critical"\} 1/);
      expect(run.landing).toContain('cache-signal-inert');
    },
    RUN_TIMEOUT_MS + 10_000,
  );

  it.concurrent(
    '--fixed: events on, router tokens_per_block 128, max_batch_size 512 → healthy, no findings, steady-state hit ~96 %; text report',
    async () => {
      const run = await runDemo(['--fixed', ...MEASURE], /kvsentinel_requests_total\{server="ctx0"\} [1-9]/);
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
      // the steady state after the warm-up is the bug report's fixed deployment: ~96 %, within 2 points
      const steady =
        /^Steady: {2}cache hit ([\d.]+)% · stickiness [\d.]+% over the ([\d,]+) requests of the last .+, after a warm-up of ([\d,]+) requests \((.+); the stats above include it\)$/m.exec(
          run.stdout,
        );
      expect(steady, run.stdout).not.toBeNull();
      const [, hit, measured, warmup] = steady!;
      expect(Number(hit)).toBeGreaterThanOrEqual(94);
      expect(Number(hit)).toBeLessThanOrEqual(98);
      expect(Number(measured!.replace(/,/g, ''))).toBeGreaterThanOrEqual(1500);
      expect(Number(warmup!.replace(/,/g, ''))).toBeGreaterThanOrEqual(1200);
    },
    RUN_TIMEOUT_MS + 10_000,
  );

  it('bad flags exit 2 naming the flag', async () => {
    const run = await runDemo(['--duration', 'soon'], /never/);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--duration');
    const set = await runDemo(['--set', 'router.nope=1'], /never/);
    expect(set.code).toBe(2);
    expect(set.stderr).toContain('router.nope');
    const warmup = await runDemo(['--warmup', 'lots'], /never/);
    expect(warmup.code).toBe(2);
    expect(warmup.stderr).toContain("--warmup 'lots'");
    const measure = await runDemo(['--warmup', '0', '--measure', '100'], /never/);
    expect(measure.code).toBe(2);
    expect(measure.stderr).toContain('--measure needs a warm-up');
  });
});
