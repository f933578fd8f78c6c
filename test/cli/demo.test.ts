// The seed row of the fault matrix on the live driver: `kvsentinel demo` runs the live simulated cluster (real
// HTTP ports) with kvsentinel relays in front of every CTX worker, and audits what the relays saw.
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/run-cli.js';

describe('kvsentinel demo (live driver, seed row)', () => {
  it('ends inert with cache-signal-inert, the findings naming its causes, and their fixes', async () => {
    const run = await runCli(['demo', '--json', '--duration', '30s', '--set', 'workload.trajectories=60'], { timeoutMs: 120_000 });
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as { verdict: string; findings: { id: string; severity: string; fix: string }[]; stats: { requests: number } };
    expect(report.verdict).toBe('inert');
    const critical = report.findings.filter((f) => f.severity === 'critical').map((f) => f.id).sort();
    expect(critical).toEqual(expect.arrayContaining(['cache-signal-inert', 'events-absent', 'tokens-per-block-mismatch']));
    expect(report.findings.find((f) => f.id === 'tokens-per-block-mismatch')!.fix).toContain('router_args.tokens_per_block: 128');
    expect(report.findings.find((f) => f.id === 'events-absent')!.fix).toMatch(/kv_cache_config\.event_buffer_max_size: \d+/);
    expect(run.stderr).toMatch(/\/metrics/);
  }, 130_000);
});
