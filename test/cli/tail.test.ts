// `kvsentinel tail` against a real WebSocket feed that sends frames out of timestamp order: --only and --server
// filter, lines come out in timestamp order, and --summary redraws one screen per second (in place on a terminal).
import { spawn } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { repoRoot } from '../helpers/paths.js';
import { eventually } from '../helpers/recording-sink.js';
import { runCli } from '../helpers/run-cli.js';
import { cleanupsAfterEach } from '../helpers/test-resources.js';

const cleanups = cleanupsAfterEach();
const T = 1_790_000_000_000;
const CLEAR = '\x1b[H\x1b[2J';

const frames = [
  { type: 'hello', ts: T, version: 'test' },
  {
    type: 'decision',
    ts: T + 300,
    server: 'ctx1',
    request_id: 'r2',
    correlation_id: 'c',
    prompt_token_count: 10,
    inflight: { ctx0: 1, ctx1: 1 },
  },
  {
    type: 'decision',
    ts: T + 100,
    server: 'ctx0',
    request_id: 'r1',
    correlation_id: 'c',
    prompt_token_count: 10,
    inflight: { ctx0: 0, ctx1: 1 },
  },
  {
    type: 'outcome',
    ts: T + 200,
    server: 'ctx0',
    request_id: 'r1',
    ok: true,
    prompt_token_count: 10,
    cached_token_count: 4,
    latency_ms: 5,
  },
  {
    type: 'finding',
    ts: T + 50,
    change: 'raised',
    id: 'events-absent',
    severity: 'critical',
    servers: ['ctx1'],
    summary: 'ctx1 emitted no events',
    fix: 'set event_buffer_max_size',
  },
  {
    type: 'stats',
    ts: T + 400,
    verdict: 'inert',
    requests: 2,
    cache_hit_ratio: 0.4,
    oracle_hit_ratio: 0.9,
    turn_scatter_ratio: 0.1,
    active_findings: ['events-absent'],
    servers: [
      {
        server: 'ctx0',
        worker_blocks: 7,
        router_table_blocks: 0,
        requests: 1,
        inflight: 0,
        router_polls: 3,
        events: 0,
        gaps: 0,
      },
      {
        server: 'ctx1',
        worker_blocks: 9,
        router_table_blocks: 0,
        requests: 1,
        inflight: 1,
        router_polls: 2,
        events: 0,
        gaps: 0,
      },
    ],
  },
  { type: 'source', ts: T + 150, source: 'relay:ctx0', up: false, error: 'connect ECONNREFUSED' },
];

/** A feed that sends `frames` to each client (out of order), then stays open until the test closes it. */
async function startFeed(): Promise<string> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  wss.on('connection', (ws: WebSocket) => {
    for (const f of frames) ws.send(JSON.stringify(f));
  });
  cleanups.push(async () => {
    for (const c of wss.clients) c.terminate();
    await new Promise<void>((resolve) => wss.close(() => resolve()));
  });
  return `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/ws`;
}

/** Runs tail (under `script` for a pseudo-terminal when tty) until `until` holds, then SIGINT. */
async function tail(args: string[], until: (out: string) => boolean, tty = false): Promise<string> {
  const cli = [process.execPath, join(repoRoot, 'dist/cli/main.js'), 'tail', ...args];
  const child = tty
    ? spawn('script', ['-qfec', cli.map((a) => `'${a}'`).join(' '), '/dev/null'], {
        env: { ...process.env, NO_COLOR: '1' },
      })
    : spawn(cli[0]!, cli.slice(1), { env: { ...process.env, NO_COLOR: '1' } });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
  cleanups.push(async () => {
    if (child.exitCode === null) child.kill('SIGKILL');
    await exited;
  });
  await eventually(() => until(out), 15_000, `tail output: ${out}`);
  child.kill('SIGINT');
  await exited;
  return out;
}

describe('kvsentinel tail', () => {
  it('prints frames in timestamp order, whatever order they arrive in', async () => {
    const url = await startFeed();
    const out = await tail([url], (o) => o.includes('stats'));
    const order = ['connected', 'RAISED', 'req=r1 corr', 'source relay:ctx0', 'outcome', 'req=r2', 'stats'].map((s) =>
      out.indexOf(s),
    );
    expect(
      order.every((i) => i >= 0),
      out,
    ).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
  });

  it("--only findings,stats and --server ctx0 keep just those frames (stats with that server's row)", async () => {
    const url = await startFeed();
    const onlyOut = await tail([url, '--only', 'findings,stats'], (o) => o.includes('stats'));
    expect(onlyOut).toContain('RAISED critical events-absent');
    expect(onlyOut).not.toMatch(/decision|outcome|source relay|connected/);
    const serverOut = await tail([url, '--server', 'ctx0', '--json'], (o) => o.includes('"stats"'));
    const kept = serverOut
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; server?: string; servers?: unknown[]; request_id?: string });
    expect(kept.map((f) => f.type)).toEqual(['hello', 'decision', 'source', 'outcome', 'stats']);
    expect(kept.find((f) => f.type === 'decision')?.request_id).toBe('r1');
    expect(kept.find((f) => f.type === 'stats')?.servers).toEqual([expect.objectContaining({ server: 'ctx0' })]);
    const bad = await runCli(['tail', url, '--only', 'findings,decisons']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(
      "--only 'findings,decisons': expected a comma-separated list of findings, stats, decisions, outcomes, sources",
    );
  });

  it('--summary on a terminal redraws one screen per second in place', async () => {
    const url = await startFeed();
    const out = await tail([url, '--summary'], (o) => o.split(CLEAR).length > 3, true);
    const screens = out.split(CLEAR).slice(1);
    expect(screens.length).toBeGreaterThanOrEqual(3);
    const full = screens.find((s) => s.includes('verdict inert')) ?? '';
    expect(full).toContain('hit 40.0%   oracle 90.0%');
    expect(full).toMatch(/ctx1\s+9\s+0\s+1\s+1\s+2\s+0\s+0/);
    expect(full).toContain('critical events-absent [ctx1]: ctx1 emitted no events');
    expect(full).toContain('relay:ctx0: connect ECONNREFUSED');
    // one line per frame is not printed in summary mode
    expect(out).not.toContain('req=r1');
  });
});
