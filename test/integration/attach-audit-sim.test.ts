// Acceptance (#28.1): the documented one-shot audit leaves routing untouched. The live simulator (preset seed) routes
// through a running sidecar's relays (`serve`, in process, with its web server); `kvsentinel audit --attach` and
// `kvsentinel record --attach` (the built CLI, as a user runs them) read its observation stream for a window and end.
// The router then keeps routing through the sidecar: 0 failed requests and 0 failed event polls, during the audit
// and after it ended — where a relay-mode `record` took its ports with it (37 → 1,616 failed requests in 16 s).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, type ServeConfig, type ServeFlags } from '../../src/app/config/serve-config.js';
import { createDaemon, type Daemon } from '../../src/app/daemon/daemon.js';
import { startLiveCluster, type LiveCluster } from '../../src/sim/live/index.js';
import { presetConfig } from '../../src/sim/sim-config.js';
import { runCli } from '../helpers/run-cli.js';
import { cleanupsAfterEach } from '../helpers/test-resources.js';

const cleanups = cleanupsAfterEach();

/** simulator and sidecar share two cores here: a late drain is the machine, not the worker (as the demo does) */
async function sidecarConfig(flags: ServeFlags): Promise<ServeConfig> {
  const c = await loadConfig(flags);
  return { ...c, timeoutMs: 30_000, relay: { ...c.relay, drainTimeoutMs: 60_000 } };
}

/** the router's failed event polls, summed over its CTX servers */
function routerPollFailures(cluster: LiveCluster): number {
  return cluster.orchestrator.router.state().reduce((n, s) => n + s.pollFailures, 0);
}

interface AuditJson {
  verdict: string;
  findings: { id: string }[];
  stats: { requests: number };
  source: { kind: string; description: string; observations: number };
}

describe('audit --attach: a one-shot audit of a running sidecar', () => {
  it('reports on the window and leaves the router with 0 failed requests after it ends', async () => {
    let daemon: Daemon | null = null;
    const cluster = await startLiveCluster(presetConfig('seed'), {
      timeScale: 10,
      ctxWaitMs: 30_000,
      ctxUrls: async (workers) => {
        const flags: ServeFlags = {
          relay: workers.map((w) => `${w.id}=${w.url}@127.0.0.1:0`),
          listenAddress: '127.0.0.1:0',
        };
        daemon = createDaemon(await sidecarConfig(flags), { loadConfig: () => sidecarConfig(flags) });
        await daemon.start();
        const started = daemon;
        return Object.fromEntries(workers.map((w) => [w.id, `127.0.0.1:${started.relayAddress(w.id)?.port ?? 0}`]));
      },
    });
    const sidecar = daemon as unknown as Daemon;
    cleanups.push(async () => {
      await cluster.stop();
      await sidecar.stop();
    });
    const url = `http://127.0.0.1:${sidecar.webAddress().port}`;
    const workload = cluster.startWorkload();
    await new Promise((r) => setTimeout(r, 2_000));

    const dir = join(mkdtempSync(join(tmpdir(), 'kvs-attach-')), 'bundle');
    const [audit, record] = await Promise.all([
      runCli(['audit', '--attach', url, '--duration', '12s', '--json'], { timeoutMs: 60_000 }),
      runCli(['record', '--attach', url, '--duration', '12s', '--out', dir], { timeoutMs: 60_000 }),
    ]);
    const failedAtEnd = workload.summary().failedRequests;
    const pollFailuresAtEnd = routerPollFailures(cluster);
    // the router goes on routing through the sidecar after the one-shot commands ended
    const requestsAtEnd = workload.summary().requests;
    await new Promise((r) => setTimeout(r, 8_000));
    const after = workload.summary();
    expect(after.requests, 'traffic went on after the audit').toBeGreaterThan(requestsAtEnd);
    expect(failedAtEnd).toBe(0);
    expect(after.failedRequests).toBe(0);
    expect(pollFailuresAtEnd).toBe(0);
    expect(routerPollFailures(cluster)).toBe(0);

    expect(audit.stderr).toContain('routing is untouched');
    expect(audit.stderr).not.toContain('owns relay ports');
    const report = JSON.parse(audit.stdout) as AuditJson;
    expect(report.source.description).toMatch(/^kvsentinel serve at http:\/\/127\.0\.0\.1:\d+ for 1\d s \(relay:ctx0/);
    expect(report.stats.requests).toBeGreaterThan(20);
    // the seed's workers have events off: the attached audit sees it as the sidecar does
    expect(report.findings.map((f) => f.id)).toContain('events-absent');
    expect([1, 3]).toContain(audit.code);

    expect(record.code, record.stderr).toBe(0);
    expect(record.stderr).toMatch(/recorded \d+ observations/);
    const offline = await runCli(['audit', '--bundle', dir, '--json']);
    const fromBundle = JSON.parse(offline.stdout) as AuditJson;
    expect(fromBundle.source.description).toContain('relay mode');
    expect(fromBundle.stats.requests).toBeGreaterThan(20);
    expect(fromBundle.findings.map((f) => f.id)).toContain('events-absent');
    await workload.stop();
  }, 120_000);
});
