// Acceptance "record then audit --bundle on the same run gives the same findings as the live audit", on the live
// simulator: the seed preset behind relays (and its router debug endpoint), one daemon whose observations feed
// both what `kvsentinel audit` (live) keeps — a one-shot state, mode auto, no window — and what `kvsentinel record`
// writes — a relay-mode bundle. The bundle is then audited offline like `audit --bundle`.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { auditBundle } from '../../src/app/audit/bundle-audit.js';
import { loadConfig, type ServeFlags } from '../../src/app/config/serve-config.js';
import { createDaemon, type Daemon } from '../../src/app/daemon/daemon.js';
import { buildAuditReport } from '../../src/core/report/audit-report.js';
import { createSentinelState } from '../../src/core/state/sentinel-state.js';
import { BundleWriter } from '../../src/outputs/bundle-writer.js';
import { startLiveCluster, type LiveCluster } from '../../src/sim/live/index.js';
import { presetConfig } from '../../src/sim/sim-config.js';
import { cleanupsAfterEach } from '../helpers/test-resources.js';

const cleanups = cleanupsAfterEach();

describe('record → audit --bundle on a live simulator run (relay sidecar)', () => {
  it('seed: the bundle audits to the same verdict, findings and stats as the live audit of the same run', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'kvs-rec-live-')), 'bundle');
    const writer = await BundleWriter.create(dir, { mode: 'relay', meta: { preset: 'seed' } });
    const live = createSentinelState({ mode: 'auto', windowMs: null });
    let observations = 0;
    let last = 0;
    let flags: ServeFlags = {};
    let daemon: Daemon | null = null;
    const cluster: LiveCluster = await startLiveCluster(presetConfig('seed'), {
      timeScale: 10,
      ctxWaitMs: 30_000,
      ctxUrls: async (workers) => {
        // port 0: each relay binds a free port itself (a port probed free beforehand can be taken meanwhile)
        flags = { relay: workers.map((w) => `${w.id}=${w.url}@127.0.0.1:0`) };
        const withTimeouts = async (): Promise<Awaited<ReturnType<typeof loadConfig>>> => {
          const c = await loadConfig(flags);
          return { ...c, timeoutMs: 30_000, relay: { ...c.relay, drainTimeoutMs: 60_000 } };
        };
        daemon = createDaemon(await withTimeouts(), {
          web: false,
          loadConfig: withTimeouts,
          createState: () => ({
            apply(o) {
              observations++;
              last = Math.max(last, o.ts);
              live.apply(o);
              writer.write(o);
            },
            evaluate: (now) => live.evaluate(now),
            snapshot: (now) => live.snapshot(now),
            lastEvaluation: () => live.lastEvaluation(),
            subscribe: (listener) => live.subscribe(listener),
          }),
        });
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
    flags = { ...flags, routerDebug: cluster.debugUrl };
    await sidecar.reload();
    const workload = cluster.startWorkload();
    await new Promise((r) => setTimeout(r, 30_000));
    await workload.stop();
    await cluster.stop();
    await sidecar.stop();
    await writer.close();

    const liveReport = buildAuditReport(live.evaluate(last), {
      kind: 'live',
      description: 'live',
      observations,
      malformed: 0,
    });
    const offline = await auditBundle(dir);
    expect(liveReport.verdict).toBe('inert');
    expect(liveReport.findings.map((f) => f.id)).toEqual(
      expect.arrayContaining(['cache-signal-inert', 'events-absent']),
    );
    expect(liveReport.stats.requests).toBeGreaterThan(150);
    expect(offline.source.observations).toBe(observations);
    expect(offline.source.malformed).toBe(0);
    expect(offline.verdict).toBe(liveReport.verdict);
    expect(offline.findings.map((f) => [f.id, f.severity, f.servers])).toEqual(
      liveReport.findings.map((f) => [f.id, f.severity, f.servers]),
    );
    expect(offline.findings).toEqual(liveReport.findings);
    expect(offline.stats).toEqual(liveReport.stats);
  }, 90_000);
});
