// Live commands end on time and quietly: a live audit reports at --duration although reads and a proxied request
// are still in flight; what its own shutdown aborts is no fault (no source-unreachable, no "is down" line); a read
// that runs out of time is reason "timeout"; SIGTERM stops serve at once when nothing is in flight, and a second
// SIGTERM cuts off in-flight relay requests instead of waiting for them.
import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers/paths.js';
import { eventually } from '../helpers/recording-sink.js';
import { cleanupsAfterEach, freePort } from '../helpers/test-resources.js';

const cleanups = cleanupsAfterEach();

/** A CTX worker that never answers: every read and every completion hangs until the test ends. */
async function startHangingWorker(): Promise<{ url: string; hits: () => Record<string, number> }> {
  const held: ServerResponse[] = [];
  const hits: Record<string, number> = {};
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0]!;
    hits[path] = (hits[path] ?? 0) + 1;
    req.resume();
    held.push(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    for (const r of held) r.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits: () => hits };
}

interface Spawned {
  out: string;
  err: string;
  firstOutAt: number | null;
  readonly startedAt: number;
  readonly exited: Promise<number | null>;
  kill(signal: NodeJS.Signals): void;
  exitedAt: number | null;
}

function spawnCli(args: string[]): Spawned {
  const child = spawn(process.execPath, [join(repoRoot, 'dist/cli/main.js'), ...args], {
    env: { ...process.env, NO_COLOR: '1' },
  });
  const s: Spawned = {
    out: '',
    err: '',
    firstOutAt: null,
    exitedAt: null,
    startedAt: Date.now(),
    exited: new Promise((resolve) =>
      child.on('close', (code) => {
        s.exitedAt = Date.now();
        resolve(code);
      }),
    ),
    kill: (signal) => child.kill(signal),
  };
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    s.firstOutAt ??= Date.now();
    s.out += d;
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => (s.err += d));
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await s.exited;
    }
  });
  return s;
}

describe('live commands end on time and exit quietly', () => {
  it('audit --duration reports at the duration with a request in flight, and its shutdown raises no fault', async () => {
    const worker = await startHangingWorker();
    const relayPort = await freePort();
    const audit = spawnCli([
      'audit',
      '--relay',
      `ctx0=${worker.url}@127.0.0.1:${relayPort}`,
      '--duration',
      '3s',
      '--json',
      '--fail-on',
      'critical',
    ]);
    // a completion through the relay that the worker never answers: in flight when the window ends
    let completion: Promise<unknown> | null = null;
    await eventually(
      () => {
        completion ??= request(`http://127.0.0.1:${relayPort}/v1/completions`, {
          method: 'POST',
          body: '{"prompt":[1,2,3]}',
        }).then(
          (r) => r.body.text(),
          () => {
            completion = null; // the relay was not listening yet: try again
          },
        );
        return (worker.hits()['/v1/completions'] ?? 0) > 0;
      },
      15_000,
      'the completion to reach the worker',
    );
    await eventually(() => audit.firstOutAt !== null, 30_000, 'the report');
    // the window is 3 s from when the sources started; one poll interval (1 s) of slack plus the process start
    const reportedAfterMs = (audit.firstOutAt ?? 0) - audit.startedAt;
    expect(reportedAfterMs).toBeGreaterThanOrEqual(3_000);
    expect(reportedAfterMs).toBeLessThan(3_000 + 1_000 + 2_500);
    // the report is out; the exit waits for the relay request the worker holds, and says so; Ctrl-C ends the wait
    await eventually(
      () => audit.err.includes('letting 1 in-flight relay requests finish'),
      10_000,
      'the wait to be announced',
    );
    const interrupted = Date.now();
    audit.kill('SIGINT');
    const code = await audit.exited;
    expect((audit.exitedAt ?? 0) - interrupted).toBeLessThan(2_000);
    const report = JSON.parse(audit.out) as { findings: { id: string }[] };
    // server_info and the drain were in flight (the worker never answers) when the audit stopped its sources
    expect(worker.hits()['/server_info']).toBeGreaterThan(0);
    expect(worker.hits()['/kv_cache_events']).toBeGreaterThan(0);
    expect(report.findings.map((f) => f.id)).not.toContain('source-unreachable');
    expect(audit.err).not.toMatch(/aborted|is down|reason=other/);
    // nothing at or above --fail-on critical, but one request cannot clear a router: exit 3 (evidence-insufficient), not 0
    expect(report.findings.map((f) => f.id)).toContain('evidence-insufficient');
    expect(code).toBe(3);
  }, 60_000);

  it('record: stopping its sources at --duration is quiet and the bundle is complete', async () => {
    const worker = await startHangingWorker();
    const dir = await mkdtemp(join(tmpdir(), 'kvs-record-quiet-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const relayPort = await freePort();
    const rec = spawnCli([
      'record',
      '--relay',
      `ctx0=${worker.url}@127.0.0.1:${relayPort}`,
      '--duration',
      '2s',
      '--out',
      join(dir, 'b'),
    ]);
    expect(await rec.exited).toBe(0);
    expect(worker.hits()['/server_info']).toBeGreaterThan(0);
    expect(rec.err).not.toMatch(/aborted|is down|reason=other/);
    expect(rec.err).toMatch(/recorded \d+ observations/);
  }, 60_000);

  it('serve: SIGTERM exits at once when idle, timeouts count as reason="timeout", a second SIGTERM cuts in-flight requests', async () => {
    const worker = await startHangingWorker();
    const dir = await mkdtemp(join(tmpdir(), 'kvs-shutdown-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const relayPort = await freePort();
    const webPort = await freePort();
    const file = join(dir, 'kvsentinel.yaml');
    await writeFile(
      file,
      `web: {listen_address: "127.0.0.1:${webPort}"}\nrelays: [{id: ctx0, upstream: "${worker.url}", listen: ${relayPort}}]\ntimeout: 300ms\nrelay: {drain_timeout: 300ms}\n`,
    );
    const metrics = async (): Promise<string> => (await request(`http://127.0.0.1:${webPort}/metrics`)).body.text();

    const serve = spawnCli(['serve', '--config.file', file]);
    await eventually(() => serve.err.includes('kvsentinel serving'), 15_000, 'serve to start');
    let text = '';
    for (
      let i = 0;
      i < 50 &&
      !(
        /source="relay:ctx0",reason="timeout"\} [1-9]/.test(text) &&
        /source="server-info:ctx0",reason="timeout"\} [1-9]/.test(text)
      );
      i++
    ) {
      text = await metrics();
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(text).toMatch(/kvsentinel_source_errors_total\{source="relay:ctx0",reason="timeout"\} [1-9]/);
    expect(text).toMatch(/kvsentinel_source_errors_total\{source="server-info:ctx0",reason="timeout"\} [1-9]/);
    expect(text).not.toMatch(/reason="other"\} [1-9]/);
    expect(serve.err).toMatch(/timed out" reason=timeout/);

    const idleStop = Date.now();
    serve.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
    expect((serve.exitedAt ?? 0) - idleStop).toBeLessThan(2_000);
    const afterStop = serve.err.slice(serve.err.indexOf('msg=stopping'));
    expect(afterStop).not.toMatch(/aborted|is down|reason=other/);

    // again, with a completion the worker never answers in flight: the first SIGTERM waits and says so, the second stops
    const busy = spawnCli(['serve', '--config.file', file]);
    await eventually(() => busy.err.includes('kvsentinel serving'), 15_000, 'serve to start again');
    const before = worker.hits()['/v1/completions'] ?? 0;
    const inFlight = request(`http://127.0.0.1:${relayPort}/v1/completions`, {
      method: 'POST',
      body: '{"prompt":[1,2,3]}',
    }).then(
      (r) => r.statusCode,
      () => 'cut',
    );
    await eventually(
      () => (worker.hits()['/v1/completions'] ?? 0) > before,
      10_000,
      'the completion to reach the worker',
    );
    busy.kill('SIGTERM');
    await eventually(
      () => busy.err.includes('letting 1 in-flight relay requests finish'),
      10_000,
      'the wait to be announced',
    );
    expect(busy.exitedAt).toBeNull();
    const secondStop = Date.now();
    busy.kill('SIGTERM');
    expect(await busy.exited).toBe(0);
    expect((busy.exitedAt ?? 0) - secondStop).toBeLessThan(2_000);
    expect(await inFlight).not.toBe(200);
  }, 90_000);
});
