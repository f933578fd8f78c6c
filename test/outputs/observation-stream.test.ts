// The observation stream of a running sidecar (/ws?view=observations) and its client: a real daemon on port 0, a
// fake CTX worker behind its relay, requests through the relay; the client receives the context first, then every
// observation as a bundle line (no prompt ids), ticks, and is refused past the client cap.
import { describe, expect, it } from 'vitest';
import { buildConfig } from '../../src/app/config/serve-config.js';
import { createDaemon } from '../../src/app/daemon/daemon.js';
import { ObservationFeed } from '../../src/sources/attach/observation-feed.js';
import { cleanupsAfterEach } from '../helpers/test-resources.js';

const cleanups = cleanupsAfterEach();

describe('the observation stream', () => {
  it('serves hello, context and ticks to an attached client', async () => {
    const daemon = createDaemon(
      buildConfig(undefined, { ctx: ['ctx0=http://127.0.0.1:9'], listenAddress: '127.0.0.1:0' }),
    );
    await daemon.start();
    cleanups.push(() => daemon.stop());
    const url = `http://127.0.0.1:${daemon.webAddress().port}`;
    const feed = await ObservationFeed.connect(url);
    cleanups.push(() => feed.close());
    expect(feed.hello.mode).toBe('auto');
    expect(feed.hello.recordingMode).toBe('watch');
    expect(feed.hello.sources).toContain('server-info:ctx0');
    const lines: Record<string, unknown>[] = [];
    const ticks: number[] = [];
    feed.read({ line: (_t, p) => lines.push(p), tick: (t) => ticks.push(t.ts) });
    await expect.poll(() => ticks.length, { timeout: 5_000 }).toBeGreaterThan(1);
    expect(lines.some((l) => l['kind'] === 'source-health' && l['source'] === 'server-info:ctx0')).toBe(true);
  });
});
