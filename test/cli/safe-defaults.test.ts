// Safe defaults of `kvsentinel serve`: a relay port without a host binds loopback only (the CTX data path is not
// exposed by accident) while the web listener keeps its own address; `@0.0.0.0:PORT` exposes a relay deliberately;
// --log.level debug and --log.format json give one JSON object per line, debug lines included. `demo` reads its
// --web.listen-address with serve's grammar, but an empty host is loopback there (a demo is not for the network).
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startFakeCtxWorker } from '../helpers/fake-ctx-worker.js';
import { repoRoot } from '../helpers/paths.js';
import { eventually } from '../helpers/recording-sink.js';
import { runCli } from '../helpers/run-cli.js';
import { cleanupsAfterEach, freePort } from '../helpers/test-resources.js';

const cleanups = cleanupsAfterEach();

function serve(args: string[]): { err: () => string; exited: Promise<number | null>; kill: () => void } {
  const child = spawn(process.execPath, [join(repoRoot, 'dist/cli/main.js'), 'serve', ...args], {
    env: { ...process.env, NO_COLOR: '1' },
  });
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  cleanups.push(async () => {
    if (child.exitCode === null) child.kill('SIGKILL');
    await exited;
  });
  return { err: () => err, exited, kill: () => child.kill('SIGTERM') };
}

function reachable(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 2_000 });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => (socket.destroy(), resolve(false)));
  });
}

/** an IPv4 address of this machine that is not loopback (the machines the tests run on have one) */
function externalAddress(): string {
  const found = Object.values(networkInterfaces())
    .flat()
    .find((i) => i !== undefined && i.family === 'IPv4' && !i.internal);
  if (found === undefined) throw new Error('no non-loopback IPv4 interface: cannot check what a relay port exposes');
  return found.address;
}

describe('safe defaults', () => {
  it('a relay port without a host binds loopback; @0.0.0.0 exposes it; JSON debug logs', async () => {
    const worker = await startFakeCtxWorker();
    cleanups.push(() => worker.close());
    const [hidden, exposed, web] = [await freePort(), await freePort(), await freePort()];
    const s = serve([
      '--relay',
      `ctx0=${worker.url}@${hidden}`,
      '--relay',
      `ctx1=${worker.url}@0.0.0.0:${exposed}`,
      '--web.listen-address',
      `0.0.0.0:${web}`,
      '--log.level',
      'debug',
      '--log.format',
      'json',
    ]);
    await eventually(() => s.err().includes('kvsentinel serving'), 15_000, 'serve to start');
    const external = externalAddress();
    expect(await reachable('127.0.0.1', hidden)).toBe(true);
    expect(await reachable(external, hidden)).toBe(false);
    expect(await reachable(external, exposed)).toBe(true);
    // the metrics listener keeps its own (wildcard) address
    expect(await reachable(external, web)).toBe(true);
    s.kill();
    expect(await s.exited, s.err()).toBe(0);
    const lines = s
      .err()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { ts: string; level: string; msg: string; relays?: string });
    expect(
      lines.every((l) => typeof l.ts === 'string' && typeof l.level === 'string' && typeof l.msg === 'string'),
    ).toBe(true);
    expect(lines.some((l) => l.level === 'debug' && l.msg === 'source started')).toBe(true);
    expect(lines.find((l) => l.msg === 'kvsentinel serving')?.relays).toBe(
      `ctx0=127.0.0.1:${hidden} ctx1=0.0.0.0:${exposed}`,
    );
  }, 60_000);

  it('info level hides debug lines; bad --log values are usage errors', async () => {
    const bad = await runCli(['serve', '--requests', '/tmp/x.jsonl', '--log.format', 'xml']);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim()).toBe(
      "kvsentinel serve: --log.format 'xml': expected logfmt or json (see 'kvsentinel serve --help')",
    );
    const level = await runCli(['serve', '--requests', '/tmp/x.jsonl', '--log.level', 'trace']);
    expect(level.code).toBe(2);
    expect(level.stderr.trim()).toBe(
      "kvsentinel serve: --log.level 'trace': expected debug, info, warn, error (see 'kvsentinel serve --help')",
    );
  });

  it("demo: ':PORT' binds loopback and '[::1]:PORT' serves on IPv6 loopback, with the URLs written in brackets", async () => {
    const empty = await runCli(['demo', '--web.listen-address', `:${await freePort()}`, '--duration', '3s']);
    expect(empty.code, empty.stderr).toBe(0);
    expect(empty.stdout).toMatch(/landing page http:\/\/127\.0\.0\.1:\d+\//);
    const v6 = await runCli(['demo', '--web.listen-address', '[::1]:0', '--duration', '3s']);
    expect(v6.code, v6.stderr).toBe(0);
    expect(v6.stdout).toMatch(/landing page http:\/\/\[::1\]:\d+\/ {3}metrics http:\/\/\[::1\]:\d+\/metrics/);
  }, 60_000);
});
