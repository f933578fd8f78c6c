// Smaller truths a new user trips on: the events-absent evidence says what the relay saw (not "0 drains"), the
// suggested event_buffer_max_size does not move with the load of the moment, `sim serve` says it is still waiting
// for CTX addresses and counts failed requests as it goes, and src/sim/README.md documents every sim serve flag and
// endpoint.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BundleWriter } from '../../src/outputs/bundle-writer.js';
import { miniCluster, type MiniOptions } from '../helpers/mini-cluster.js';
import { repoRoot } from '../helpers/paths.js';
import { eventually } from '../helpers/recording-sink.js';
import { runCli, spawnCli } from '../helpers/run-cli.js';
import { cleanupsAfterEach, freePort } from '../helpers/test-resources.js';

const cleanups = cleanupsAfterEach();

async function bundle(mini: MiniOptions): Promise<string> {
  const dir = join(mkdtempSync(join(tmpdir(), 'kvs-truths-')), 'bundle');
  const writer = await BundleWriter.create(dir, { mode: 'relay' });
  for (const obs of miniCluster(mini)) writer.write(obs);
  await writer.close();
  return dir;
}

interface Finding {
  id: string;
  summary: string;
  fix: string;
  evidence: Record<string, unknown>;
}

function spawnSim(args: readonly string[]): { err: () => string; exited: Promise<number | null> } {
  return spawnCli(['sim', 'serve', ...args], cleanups, 'SIGKILL');
}

const SMALL = [
  'ctx.servers=2',
  'ctx.attention_dp=2',
  'ctx.stall_every=0',
  'ctx.overhead=20ms',
  'ctx.prefill_tokens_per_s=200000',
  'gen.overhead=20ms',
  'gen.ms_per_token=0.5',
  'workload.trajectories=100000',
  'workload.concurrency=4',
  'workload.system_prefix_tokens=600',
  'workload.task_tokens_median=300',
  'workload.turns_min=2',
  'workload.turns_max=3',
  'workload.output_tokens_median=10',
  'workload.tool_tokens_median=50',
  'workload.tool_tokens_max=200',
  'workload.tool_latency=20ms',
  'workload.ramp=20ms',
].flatMap((s) => ['--set', s]);

describe('smaller truths', () => {
  it('events-absent says every read came back empty, and suggests one buffer size whatever the load', async () => {
    const fixes = new Set<string>();
    for (const trajectories of [40, 160]) {
      const run = await runCli([
        'audit',
        '--bundle',
        await bundle({ routing: 'random', events: false, trajectories }),
        '--json',
      ]);
      const report = JSON.parse(run.stdout) as { findings: Finding[] };
      const absent = report.findings.find((f) => f.id === 'events-absent');
      expect(absent, run.stdout).toBeDefined();
      expect(absent!.summary).toMatch(/came back \[\]/);
      expect(absent!.summary).not.toMatch(/\(0 drains/);
      fixes.add(/event_buffer_max_size: (\d+)/.exec(absent!.fix)?.[1] ?? '');
    }
    expect([...fixes]).toEqual(['16384']);
  });

  it('sim serve says it is still waiting for CTX addresses, then names them when it gives up', async () => {
    const port = await freePort();
    const sim = spawnSim(['--ctx-urls', `ctx0=127.0.0.1:${port}`, '--ctx-wait', '7s']);
    await eventually(() => sim.err().includes('still waiting for'), 15_000, 'a progress line while waiting');
    expect(sim.err()).toContain(`waiting for the CTX addresses 127.0.0.1:${port} to answer /server_info (up to 7 s)`);
    expect(sim.err()).toMatch(new RegExp(`still waiting for 127\\.0\\.0\\.1:${port}: \\d+ s of 7 s`));
    expect(await sim.exited).toBe(5); // unreachable
    expect(sim.err()).toContain(`127.0.0.1:${port}`);
  }, 30_000);

  it('sim serve counts failed requests in its progress lines as the workload runs', async () => {
    // ctx0 restarts after 1 s (virtual) and refuses requests while it is down: some turns fail and are retried
    const sim = spawnSim([
      ...SMALL,
      '--set',
      'ctx.restart_at=1s',
      '--set',
      'ctx.restart_downtime=20s',
      '--workload',
      '--duration',
      '12s',
      '--json',
    ]);
    await eventually(() => /requests \([1-9]\d* failed\)/.test(sim.err()), 20_000, 'a progress line counting failures');
    await sim.exited;
  }, 30_000);

  it('src/sim/README.md documents every sim serve flag and endpoint', async () => {
    const readme = readFileSync(join(repoRoot, 'src/sim/README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## `kvsentinel sim serve`'));
    expect(section.length).toBeGreaterThan(100);
    const help = (await runCli(['sim', 'serve', '--help'])).stdout;
    const flags = [...help.matchAll(/^\s+(--[a-z-]+)/gm)].map((m) => m[1]!).filter((f) => f !== '--help');
    expect(flags.length).toBeGreaterThan(10);
    for (const f of flags) expect(section, f).toContain(`\`${f}`);
    const sources = ['src/sim/live/live-orchestrator.ts', 'src/sim/live/live-ctx-worker.ts']
      .map((p) => readFileSync(join(repoRoot, p), 'utf8'))
      .join('\n');
    // each server's route table: `'METHOD /path': handler`
    const routes = [...sources.matchAll(/^\s+'(GET|POST) (\/[^']*)':/gm)].map((m) => `${m[1]!} ${m[2]!}`);
    expect(routes.length).toBeGreaterThan(10);
    for (const r of routes) expect(section, r).toContain(`\`${r}`);
  });
});
