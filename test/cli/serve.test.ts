import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { startFakeCtxWorker } from '../helpers/fake-ctx-worker.js';
import { repoRoot } from '../helpers/paths.js';
import { eventually } from '../helpers/recording-sink.js';
import { runCli } from '../helpers/run-cli.js';
import { cleanupsAfterEach, freePort } from '../helpers/test-resources.js';

const cleanups = cleanupsAfterEach();

interface Spawned {
  readonly child: ChildProcessWithoutNullStreams;
  out: string;
  err: string;
  readonly exited: Promise<number | null>;
}

function spawnCli(args: string[]): Spawned {
  const child = spawn(process.execPath, [join(repoRoot, 'dist/cli/main.js'), ...args], {
    env: { ...process.env, NO_COLOR: '1' },
  });
  const s: Spawned = {
    child,
    out: '',
    err: '',
    exited: new Promise((resolve) => child.on('close', (code) => resolve(code))),
  };
  child.stdout.setEncoding('utf8').on('data', (d: string) => (s.out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (s.err += d));
  cleanups.push(async () => {
    if (child.exitCode === null) {
      child.kill('SIGKILL');
      await s.exited;
    }
  });
  return s;
}

async function text(url: string): Promise<string> {
  const res = await request(url);
  return res.body.text();
}

describe('kvsentinel serve (CLI)', () => {
  it('rejects bad flags (exit 2) and config keys (exit 4) with a message naming them', async () => {
    const bad = await runCli(['serve', '--relay', 'ctx0=http://10.0.0.5:8001']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--relay 'ctx0=http://10.0.0.5:8001': expected ID=URL@[HOST:]PORT");
    const dir = await mkdtemp(join(tmpdir(), 'kvs-cli-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const file = join(dir, 'kvsentinel.yaml');
    await writeFile(
      file,
      'relays:\n  - id: ctx0\n    upstream: http://127.0.0.1:8001\n    listen: 9401\nrelay:\n  drain_intervall: 1s\n',
    );
    const unknown = await runCli(['serve', '--config.file', file]);
    expect(unknown.code).toBe(4);
    expect(unknown.stderr).toContain(`${file}: relay.drain_intervall: unknown key`);
    await writeFile(
      file,
      '{"relays": [{"id": "ctx0", "upstream": "http://127.0.0.1:8001", "listen": "127.0.0.1:99999"}]}',
    );
    const port = await runCli(['serve', '--config', file, '--config.check']);
    expect(port.code).toBe(4);
    expect(port.stderr).toContain("relays[0].listen: '99999' is not a port");
    const none = await runCli(['serve']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no source configured');
  });

  it('serves, keeps the old config on a bad SIGHUP, feeds `kvsentinel tail`, and exits 0 on SIGTERM', async () => {
    const worker = await startFakeCtxWorker();
    cleanups.push(() => worker.close());
    const [webPort, relayPort] = [await freePort(), await freePort()];
    const dir = await mkdtemp(join(tmpdir(), 'kvs-cli-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const file = join(dir, 'kvsentinel.yaml');
    const good = `web:\n  listen_address: 127.0.0.1:${webPort}\nrelays:\n  - id: ctx0\n    upstream: ${worker.url}\n    listen: 127.0.0.1:${relayPort}\nrelay:\n  drain_interval: 50ms\n`;
    await writeFile(file, good);
    const serve = spawnCli(['serve', '--config.file', file]);
    const base = `http://127.0.0.1:${webPort}`;
    await eventually(() => serve.err.includes('kvsentinel serving'), 15_000, 'serve to start');
    expect(await text(`${base}/-/ready`)).toBe('Ready\n');

    const tail = spawnCli(['tail', base]);
    await eventually(() => tail.out.includes('connected to kvsentinel'), 10_000, 'tail to connect');
    const res = await request(`http://127.0.0.1:${relayPort}/v1/completions`, {
      method: 'POST',
      headers: { 'x-correlation-id': 'traj-1' },
      body: '{"prompt":[5,6,7,8]}',
    });
    expect(res.statusCode).toBe(200);
    await res.body.text();
    await eventually(() => tail.out.includes('decision ctx0') && tail.out.includes('outcome '), 10_000, 'tail lines');
    expect(tail.out).toMatch(/decision ctx0 req=relay-ctx0-1 corr=traj-1 prompt=4/);

    await writeFile(file, `${good}bogus_key: 1\n`);
    serve.child.kill('SIGHUP');
    await eventually(() => serve.err.includes('reload failed'), 10_000, 'reload failure logged');
    expect(serve.err).toContain('bogus_key: unknown key');
    expect(await text(`${base}/metrics`)).toContain('kvsentinel_config_last_reload_successful 0');
    expect(await text(`${base}/-/healthy`)).toBe('Healthy\n');
    expect(await text(`${base}/health`)).toBe('Healthy\n');
    await writeFile(file, good);
    serve.child.kill('SIGHUP');
    await eventually(() => serve.err.includes('configuration reloaded'), 10_000, 'reload success');

    serve.child.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
    expect(serve.err).toContain('kvsentinel stopped');
    expect(await tail.exited).toBe(0);
  }, 60_000);

  it('tail: an unreachable sidecar is exit 5 with one line', async () => {
    const port = await freePort();
    const r = await runCli(['tail', `http://127.0.0.1:${port}`]);
    expect(r.code).toBe(5);
    expect(r.stderr).toMatch(/cannot connect to ws:\/\/127\.0\.0\.1:\d+\/ws/);
  });

  it('audit with live source flags: relays for --duration, then the JSON report (exit by --fail-on)', async () => {
    const worker = await startFakeCtxWorker();
    cleanups.push(() => worker.close());
    worker.cachedTokens = 2;
    const relayPort = await freePort();
    const audit = spawnCli([
      'audit',
      '--relay',
      `ctx0=${worker.url}@127.0.0.1:${relayPort}`,
      '--duration',
      '6s',
      '--json',
      '--fail-on',
      'critical',
    ]);
    const base = `http://127.0.0.1:${relayPort}`;
    // the relay comes up inside the audit: retry until it answers
    let sent = 0;
    const deadline = Date.now() + 15_000;
    while (sent < 4 && Date.now() < deadline) {
      try {
        const res = await request(`${base}/v1/completions`, {
          method: 'POST',
          headers: { 'x-correlation-id': 't1' },
          body: `{"prompt":[1,2,3,4,${sent}]}`,
        });
        await res.body.text();
        await (await request(`${base}/kv_cache_events`, { method: 'POST' })).body.text();
        sent++;
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    expect(sent).toBe(4);
    const code = await audit.exited;
    const report = JSON.parse(audit.out) as { verdict: string; stats: { requests: number; cache_hit_ratio: number } };
    expect(report.stats.requests).toBe(4);
    expect(report.stats.cache_hit_ratio).toBeCloseTo(2 / 5);
    expect([0, 1]).toContain(code);
    const bad = await runCli(['audit', '--requests', 'x.jsonl', '--duration', 'soon']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--duration: 'soon' is not a positive duration");
  }, 60_000);

  it('record: the sources into a bundle that audit --bundle replays', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kvs-rec-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const log = join(dir, 'requests.jsonl');
    const lines = Array.from({ length: 6 }, (_, i) =>
      JSON.stringify({
        ts: 1_700_000_000 + i,
        request_id: `r${i}`,
        correlation_id: `t${i % 2}`,
        ctx_server: `ctx${i % 2}`,
        prompt_tokens: 100,
        cached_tokens: i < 2 ? 0 : 80,
      }),
    );
    await writeFile(log, `${lines.join('\n')}\nnot json\n`);
    const out = join(dir, 'bundle');
    const rec = await runCli(['record', '--requests', log, '--duration', '1500ms', '--out', out]);
    expect(rec.stderr).toMatch(/recorded \d+ observations/);
    expect(rec.code).toBe(0);
    const audit = await runCli(['audit', '--bundle', out, '--json', '--fail-on', 'critical']);
    const report = JSON.parse(audit.stdout) as { stats: { requests: number; cache_hit_ratio: number } };
    expect(report.stats.requests).toBe(6);
    expect(report.stats.cache_hit_ratio).toBeCloseTo(320 / 600);
    const again = await runCli(['record', '--requests', log, '--duration', '1s', '--out', out]);
    expect(again.code).toBe(6); // the output is not available
    expect(again.stderr).toContain('is not empty');
  }, 60_000);
});
