import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/run-cli.js';

// a small cluster run so the CLI test stays fast; the preset itself is exercised by test/sim/calibration
const SMALL = [
  '--set',
  'workload.concurrency=12',
  '--set',
  'workload.trajectories=12',
  '--set',
  'workload.turns_min=2',
  '--set',
  'workload.turns_max=4',
];

describe('kvsentinel sim run', () => {
  it('--json prints the run summary with the faults in effect', async () => {
    const run = await runCli(['sim', 'run', '--preset', 'seed', ...SMALL, '--json']);
    expect(run.code).toBe(0);
    const result = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(result).toMatchObject({
      requests: expect.any(Number) as number,
      cache_hit_ratio: expect.any(Number) as number,
      turn_scatter_ratio: expect.any(Number) as number,
    });
    expect(result.router).toMatchObject({ type: 'kv_cache_aware', tokens_per_block: 32, max_batch_size: 64 });
    // one naming style: every key at every depth is snake_case
    const keys: string[] = [];
    const walk = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v !== null && typeof v === 'object') {
        for (const [k, x] of Object.entries(v)) {
          keys.push(k);
          walk(x);
        }
      }
    };
    walk(result);
    expect(keys.filter((k) => !/^[a-z0-9_]+$/.test(k))).toEqual([]);
    expect(keys).toContain('router_block_table_size');
    expect(result.faults).toEqual(['ctx.event_buffer_max_size=0', 'router.tokens_per_block=32']);
  });

  it('--set ctx.event_buffer_max_size restores events; logs are written when asked', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kvs-sim-'));
    const requests = join(dir, 'requests.jsonl');
    const orchestrator = join(dir, 'orchestrator.log');
    const run = await runCli([
      'sim',
      'run',
      ...SMALL,
      '--set',
      'ctx.event_buffer_max_size=1000',
      '--set',
      'router.tokens_per_block=128',
      '--request-log',
      requests,
      '--orchestrator-log',
      orchestrator,
    ]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/faults {8}none/);
    const lines = readFileSync(requests, 'utf8').trim().split('\n');
    expect(JSON.parse(lines[0]!)).toMatchObject({
      correlation_id: expect.stringMatching(/^traj-/) as string,
      ctx_server: expect.stringMatching(/^ctx[012]$/) as string,
    });
    // TensorRT-LLM's logger: Python logging's time prefix, then the severity and the module padded to 8
    expect(readFileSync(orchestrator, 'utf8')).toMatch(
      /^\[\d\d\/\d\d\/\d{4}-\d\d:\d\d:\d\d\] \[TRT-LLM\] \[I\] \[serve {3}\] BlockHashMixin: tokens_per_block=128, /m,
    );
  });

  it.each([
    [['--set', 'ctx.no_such_knob=1'], /--set ctx\.no_such_knob: unknown key/],
    [['--set', 'router.max_batch_size=zero'], /--set router\.max_batch_size=zero: expected a positive integer/],
    [
      ['--set', 'router.type=magic'],
      /--set router\.type=magic: expected one of round_robin, load_balancing, kv_cache_aware, conversation/,
    ],
    [['--set', 'ctx.restart_at=soon'], /--set ctx\.restart_at=soon: expected a duration/],
    // a duration needs its unit (docs/units.md): a bare number could be seconds or milliseconds
    [['--set', 'ctx.stall=2'], /--set ctx\.stall=2: '2' has no unit: write 2s or 2ms/],
    [['--set', 'novalue'], /--set novalue: expected key=value/],
    [['--preset', 'nope'], /--preset nope: unknown preset/],
  ])('rejects %j with exit 2 and names the key', async (args, message) => {
    const run = await runCli(['sim', 'run', ...args]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(message);
  });
});
