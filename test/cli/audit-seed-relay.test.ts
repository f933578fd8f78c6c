// Issue #14's last row, literally as a new user runs it: `kvsentinel sim serve --preset seed --workload` (events
// off, load-only routing) with its CTX list pointed at the relay ports of `kvsentinel audit --relay … --duration
// 15s`, no router debug endpoint and no orchestrator log. The printed verdict must not claim the cache signal works:
// it is INERT, or UNKNOWN with evidence-insufficient; events-absent is reported; the exit code is nonzero (1:
// events-absent is critical, docs/design.md §6).
import { createServer, type Server } from 'node:net';
import { describe, expect, it } from 'vitest';
import { presetConfig } from '../../src/sim/sim-config.js';
import { eventually } from '../helpers/recording-sink.js';
import { runCli, spawnCli } from '../helpers/run-cli.js';
import { cleanupsAfterEach, freePort } from '../helpers/test-resources.js';

const cleanups = cleanupsAfterEach();

/** `count` consecutive ports on 127.0.0.1 that were free a moment ago (for --port-base). */
async function freePortRange(count: number): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const base = await freePort();
    if (base + count > 65_535) continue;
    const held: Server[] = [];
    let ok = true;
    for (let p = base; p < base + count && ok; p++) {
      const srv = createServer();
      ok = await new Promise<boolean>((resolve) => {
        srv.once('error', () => resolve(false));
        srv.listen(p, '127.0.0.1', () => resolve(true));
      });
      if (ok) held.push(srv);
    }
    await Promise.all(held.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    if (ok) return base;
  }
  throw new Error(`no ${count} consecutive free ports`);
}

function spawnSimServe(args: readonly string[]): { err: () => string; exited: Promise<number | null> } {
  return spawnCli(['sim', 'serve', ...args], cleanups);
}

describe('audit --relay against sim serve --preset seed (issue #14, relay only)', () => {
  it('never prints DEGRADED or "the cache signal works": INERT (or UNKNOWN + evidence-insufficient), events-absent, exit 1', async () => {
    const ids = Array.from({ length: presetConfig('seed', []).ctx.servers }, (_, i) => `ctx${i}`);
    const workerBase = await freePortRange(ids.length + 1);
    const relayPorts = await Promise.all(ids.map(() => freePort()));
    // the simulator's workers on workerBase…, its orchestrator sending every CTX request to the audit's relays
    const sim = spawnSimServe([
      '--preset',
      'seed',
      '--workload',
      '--port-base',
      String(workerBase),
      '--ctx-urls',
      ids.map((id, i) => `${id}=127.0.0.1:${relayPorts[i]}`).join(','),
    ]);
    await eventually(
      () => sim.err().includes('waiting for the CTX addresses'),
      20_000,
      'sim serve up and waiting for the relays',
    );
    const relays = ids.flatMap((id, i) => [
      '--relay',
      `${id}=http://127.0.0.1:${workerBase + i}@127.0.0.1:${relayPorts[i]}`,
    ]);
    const run = await runCli(['audit', ...relays, '--duration', '15s', '--no-progress'], { timeoutMs: 60_000 });
    const context = `exit ${run.code}\n${run.stdout}\n${run.stderr}\nsim: ${sim.err().slice(-2000)}`;

    const verdict = /^Verdict: (\w+)/m.exec(run.stdout)?.[1];
    expect(['INERT', 'UNKNOWN'], context).toContain(verdict);
    if (verdict === 'UNKNOWN') expect(run.stdout, context).toMatch(/WARNING\s+evidence-insufficient/);
    else expect(run.stdout, context).toMatch(/CRITICAL\s+cache-signal-inert/);
    expect(run.stdout, context).toMatch(/CRITICAL\s+events-absent/);
    expect(run.stdout, context).not.toContain('DEGRADED');
    expect(run.stdout, context).not.toMatch(/cache signal works/i);
    expect(run.code, context).toBe(1);
    // the seed's traffic went through the relays, and sim serve's workload kept running
    expect(sim.err(), context).toMatch(/\d+ s: [1-9]\d* requests \(0 failed\)/);
  }, 90_000);
});
