// A relay's slow paths reach /metrics and the log: the daemon under the test runner runs its sources untranspiled, so
// the scan thread's compiled file is missing and every CTX body and response is read on the relay's event loop (the
// `inline` fallback); a body of several prompts takes the text path too. Each is counted per server and reason, every
// reason's series exists from the first scrape, and the first of each reason is logged once.
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { buildConfig } from '../../src/app/config/serve-config.js';
import { createDaemon } from '../../src/app/daemon/daemon.js';
import { SCAN_FALLBACK_REASONS } from '../../src/core/relay/scan-fallback.js';
import { startFakeCtxWorker } from '../helpers/fake-ctx-worker.js';
import { cleanupsAfterEach, readUntil } from '../helpers/test-resources.js';

const cleanups = cleanupsAfterEach();

const valueOf = (metrics: string, series: string): number | undefined => {
  const line = metrics.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};
const fallbacks = (reason: string): string => `kvsentinel_relay_scan_fallbacks_total{server="ctx0",reason="${reason}"}`;

describe('relay scan fallbacks', () => {
  it('counts each CTX body and response read inline, and the text path, in /metrics; logs each reason once', async () => {
    const worker = await startFakeCtxWorker();
    cleanups.push(() => worker.close());
    const logged: { level: string; message: string }[] = [];
    const log = (level: string) => (message: string) => void logged.push({ level, message });
    const config = buildConfig(
      {
        web: { listen_address: '127.0.0.1:0' },
        relays: [{ id: 'ctx0', upstream: worker.url, listen: '127.0.0.1:0' }],
        relay: { drain_interval: '1h' },
        server_info_interval: '1h',
      },
      {},
    );
    const daemon = createDaemon(config, { logger: { info: log('info'), warn: log('warn'), error: log('error') } });
    await daemon.start();
    cleanups.push(() => daemon.stop());
    const web = daemon.webAddress();
    const base = `http://${web.host}:${web.port}`;
    const relay = `http://127.0.0.1:${daemon.relayAddress('ctx0')?.port}`;

    const before = await (await request(`${base}/metrics`)).body.text();
    for (const reason of SCAN_FALLBACK_REASONS) expect(valueOf(before, fallbacks(reason))).toBe(0);

    for (const prompt of ['[1,2,3,4,5,6,7,8]', '[9,10,11,12]', '[[1,2],[3]]']) {
      const res = await request(`${relay}/v1/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: `{"model":"m","prompt":${prompt},"max_tokens":1}`,
      });
      expect(res.statusCode).toBe(200);
      await res.body.text();
    }
    // three requests and their three responses read inline; one body of several prompts parsed as text
    const after = await readUntil(
      async () => (await request(`${base}/metrics`)).body.text(),
      (m) => valueOf(m, fallbacks('inline')) === 6 && valueOf(m, fallbacks('text_path')) === 1,
      'the fallbacks in /metrics',
    );
    for (const reason of SCAN_FALLBACK_REASONS.filter((r) => r !== 'inline' && r !== 'text_path'))
      expect(valueOf(after, fallbacks(reason))).toBe(0);
    expect(logged.filter((l) => l.message.startsWith('relay:ctx0: '))).toEqual([
      {
        level: 'warn',
        message:
          'relay:ctx0: CTX bodies are read on the relay event loop: the scan thread is not available (logged once)',
      },
      {
        level: 'info',
        message:
          'relay:ctx0: a CTX body is not a flat token-id prompt: it is parsed whole as text on the relay event loop (logged once)',
      },
    ]);
  }, 20_000);
});
