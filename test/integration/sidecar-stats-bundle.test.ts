// A relay's own counters are observations like everything else: the daemon observes them (sidecar-stats) on its
// clock and once at stop, so a recording carries them and its replay (`audit --bundle`) sees the same counts the
// live state ended with. Under the test runner every CTX body and response is read inline, a counted slow path.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { buildConfig } from '../../src/app/config/serve-config.js';
import { createDaemon } from '../../src/app/daemon/daemon.js';
import { tappedStatePort } from '../../src/app/tapped-state.js';
import { auditRecords } from '../../src/core/report/audit-records.js';
import { createSentinelState } from '../../src/core/state/sentinel-state.js';
import { BundleWriter } from '../../src/outputs/bundle-writer.js';
import { readBundleManifest, readBundleRecords } from '../../src/sources/bundle-reader.js';
import { startFakeCtxWorker } from '../helpers/fake-ctx-worker.js';
import { cleanupsAfterEach } from '../helpers/test-resources.js';

const cleanups = cleanupsAfterEach();

describe('sidecar stats in a recording', () => {
  it("records a relay's counters and replays them from the bundle, with no relay running", async () => {
    const worker = await startFakeCtxWorker();
    cleanups.push(() => worker.close());
    const config = buildConfig(
      {
        relays: [{ id: 'ctx0', upstream: worker.url, listen: '127.0.0.1:0' }],
        relay: { drain_interval: '1h' },
        server_info_interval: '1h',
      },
      {},
    );
    const dir = join(mkdtempSync(join(tmpdir(), 'kvs-stats-')), 'bundle');
    const writer = await BundleWriter.create(dir, { mode: 'relay' });
    const live = createSentinelState({ mode: 'auto', windowMs: null });
    const daemon = createDaemon(config, {
      web: false,
      createState: () => tappedStatePort(live, (o) => writer.write(o)),
    });
    await daemon.start();
    cleanups.push(() => daemon.stop());
    const relay = `http://127.0.0.1:${daemon.relayAddress('ctx0')?.port}`;
    for (const prompt of ['[1,2,3,4,5,6,7,8]', '[9,10,11,12]']) {
      const res = await request(`${relay}/v1/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: `{"model":"m","prompt":${prompt},"max_tokens":1}`,
      });
      await res.body.text();
    }
    await daemon.stop();
    await writer.close();

    const ended = live.snapshot(Date.now()).sidecar.relays;
    expect(ended).toHaveLength(1);
    expect(ended[0]?.server).toBe('ctx0');
    // two requests and their two responses, read inline
    expect(ended[0]?.scanFallbacks.inline).toBe(4);

    const manifest = await readBundleManifest(dir);
    const replayed = await auditRecords(readBundleRecords(dir, manifest, { onIssue: () => undefined }), {
      mode: manifest.mode,
    });
    expect(replayed.snapshot.sidecar.relays).toEqual(ended);
    expect(replayed.snapshot.sidecar.streams).toEqual([]);
    // a stats observation names no server: the replayed state knows only the configured one
    expect(replayed.snapshot.servers.map((s) => s.server)).toEqual(['ctx0']);
  }, 20_000);
});
