// `kvsentinel sim serve` as a user runs it: the JSON line with the URLs, the workload to completion, the log files,
// graceful shutdown on SIGTERM, and clear usage errors.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers/paths.js';
import { runCli } from '../helpers/run-cli.js';

const SMALL = [
  'ctx.servers=2',
  'ctx.attention_dp=2',
  'ctx.stall_every=0',
  'ctx.overhead=20ms',
  'ctx.prefill_tokens_per_s=200000',
  'gen.overhead=20ms',
  'gen.ms_per_token=0.5',
  'workload.trajectories=4',
  'workload.concurrency=2',
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

let child: ChildProcessWithoutNullStreams | null = null;

afterEach(() => {
  if (child !== null && child.exitCode === null) child.kill('SIGKILL');
  child = null;
});

interface Running {
  readonly lines: string[];
  nextLine(): Promise<string>;
  exited: Promise<number | null>;
}

function start(args: readonly string[]): Running {
  const proc = spawn(process.execPath, [join(repoRoot, 'dist/cli/main.js'), ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child = proc;
  const lines: string[] = [];
  const waiters: ((line: string) => void)[] = [];
  let buffer = '';
  let consumed = 0;
  proc.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    let nl;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      lines.push(buffer.slice(0, nl));
      buffer = buffer.slice(nl + 1);
    }
    while (waiters.length > 0 && consumed < lines.length) waiters.shift()!(lines[consumed++]!);
  });
  let stderr = '';
  proc.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => proc.on('close', (code) => resolve(code)));
  return {
    lines,
    nextLine: () =>
      new Promise((resolve, reject) => {
        if (consumed < lines.length) return resolve(lines[consumed++]!);
        waiters.push(resolve);
        void exited.then(() => reject(new Error(`exited before printing a line; stderr: ${stderr}`)));
      }),
    exited,
  };
}

describe('kvsentinel sim serve', () => {
  it('prints the URLs as one JSON line, runs the workload, writes the logs and exits when done', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'simserve-'));
    const requestLog = join(dir, 'requests.jsonl');
    const orchestratorLog = join(dir, 'orchestrator.log');
    const run = start([
      'sim',
      'serve',
      '--preset',
      'healthy',
      ...SMALL,
      '--json',
      '--workload',
      '--exit-when-done',
      '--time-scale',
      '2',
      '--request-log',
      requestLog,
      '--orchestrator-log',
      orchestratorLog,
    ]);
    const info = JSON.parse(await run.nextLine()) as {
      preset: string;
      workers: { id: string; url: string; address: string }[];
      orchestrator_url: string;
      debug_url: string;
      ctx_addresses: Record<string, string>;
      faults: string[];
    };
    expect(info.preset).toBe('healthy');
    expect(info.faults).toEqual([]);
    expect(info.workers.map((w) => w.id)).toEqual(['ctx0', 'ctx1']);
    expect(info.debug_url).toBe(`${info.orchestrator_url}/debug/router`);
    expect(info.ctx_addresses).toEqual({ ctx0: info.workers[0]!.address, ctx1: info.workers[1]!.address });
    const serverInfo = await request(`${info.workers[0]!.url}/server_info`);
    expect(JSON.parse(await serverInfo.body.text())).toMatchObject({ kv_cache_hash_algo: 'v1_block_key' });
    const done = JSON.parse(await run.nextLine()) as {
      workload_done: { trajectories: number; requests: number; cache_hit_ratio: number };
    };
    expect(done.workload_done.trajectories).toBe(4);
    expect(await run.exited).toBe(0);
    const lines = readFileSync(requestLog, 'utf8').trim().split('\n');
    expect(lines.length).toBe(done.workload_done.requests);
    expect(JSON.parse(lines[0]!)).toHaveProperty('cached_tokens');
    // the newest TensorRT-LLM logger's form: time, tag, module, then router_utils' f-string and the stock ready line
    const log = readFileSync(orchestratorLog, 'utf8');
    expect(log).toMatch(
      /^\[\d\d\/\d\d\/\d{4}-\d\d:\d\d:\d\d\] \[TRT-LLM\] \[I\] \[serve {3}\] BlockHashMixin: tokens_per_block=\d+, custom_tokenizer=None$/m,
    );
    expect(log.match(/\[serve {3}\] server is ready with info: \{/g)).toHaveLength(2);
  });

  it.each(['SIGTERM', 'SIGINT'] as const)('shuts down gracefully on %s and closes its ports', async (signal) => {
    const run = start(['sim', 'serve', '--preset', 'seed', ...SMALL, '--json', '--workload']);
    const info = JSON.parse(await run.nextLine()) as { orchestrator_url: string; workers: { url: string }[] };
    expect((await request(`${info.orchestrator_url}/health`)).statusCode).toBe(200);
    child!.kill(signal);
    expect(await run.exited).toBe(0);
    await expect(request(`${info.orchestrator_url}/health`)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await expect(request(`${info.workers[0]!.url}/health`)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('rejects bad flags with a message naming them', async () => {
    const unknown = await runCli(['sim', 'serve', '--set', 'ctx.nope=1']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('ctx.nope');
    const urls = await runCli(['sim', 'serve', '--ctx-urls', 'ctx0=nohostport']);
    expect(urls.code).toBe(2);
    expect(urls.stderr).toContain('--ctx-urls ctx0=nohostport');
    const missing = await runCli(['sim', 'serve', '--ctx-urls', 'ctx9=127.0.0.1:1']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('ctx9');
  });
});
