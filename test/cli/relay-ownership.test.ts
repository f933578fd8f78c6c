// A one-shot command that owns relay ports says so when it starts and when it ends: the router's CTX requests to
// those ports fail once it is gone (`audit --attach` against a running serve is the way that owns none).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startFakeCtxWorker } from '../helpers/fake-ctx-worker.js';
import { runCli } from '../helpers/run-cli.js';
import { cleanupsAfterEach } from '../helpers/test-resources.js';

const cleanups = cleanupsAfterEach();

describe('one-shot commands that own relay ports', () => {
  it.each([
    ['audit', [] as string[]],
    ['record', ['--out', join(mkdtempSync(join(tmpdir(), 'kvs-own-')), 'bundle')]],
  ])('%s --relay says so at start and at exit', async (command, extra) => {
    const worker = await startFakeCtxWorker();
    cleanups.push(() => worker.close());
    const run = await runCli([command, '--relay', `ctx0=${worker.url}@127.0.0.1:0`, '--duration', '2s', ...extra]);
    const start = run.stderr.indexOf(`kvsentinel ${command}: this ${command} owns relay ports 127.0.0.1:`);
    const end = run.stderr.indexOf(`kvsentinel ${command}: relay ports 127.0.0.1:`);
    expect(start, run.stderr).toBeGreaterThanOrEqual(0);
    expect(end, run.stderr).toBeGreaterThan(start);
    expect(run.stderr).toMatch(/owns relay ports 127\.0\.0\.1:\d+ \(ctx0\)/);
    expect(run.stderr).toContain(`kvsentinel ${command} --attach`);
    expect(run.stderr.slice(end)).toMatch(/are closed now: a router still sending CTX requests to them fails them/);
  });

  it('audit --attach beside source flags is refused, naming them', async () => {
    const run = await runCli(['audit', '--attach', 'http://127.0.0.1:9', '--relay', 'ctx0=http://w:1@9401']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      "--attach reads a running sidecar's sources: give it without source flags (here --relay)",
    );
  });
});
