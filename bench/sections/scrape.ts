// §6 Scrape: time to render `/metrics` of `kvsentinel serve` relaying 64 simulated CTX servers whose event
// streams carry 8 attention-DP ranks each, measured as a Prometheus scraper sees it (time to last byte).
import { cliCommandMissing, cliPath } from '../lib/cli.js';
import { freePort, waitForHttp } from '../lib/net.js';
import { writePayload } from '../lib/payload.js';
import { startService, startTaskService } from '../lib/proc.js';
import { fmtBytes, fmtMs, fmtRatio, notMeasured, statusOf, type RunConfig, type SectionReport } from '../lib/report.js';
import { median, quantile } from '../lib/stats.js';

const TITLE = '6. Scrape';

async function timedGet(url: string): Promise<{ ms: number; text: string; status: number }> {
  const start = performance.now();
  const res = await fetch(url);
  const text = await res.text();
  return { ms: performance.now() - start, text, status: res.status };
}

export async function scrapeSection(config: RunConfig): Promise<SectionReport> {
  const missing = await cliCommandMissing(['serve']);
  if (missing !== null)
    return notMeasured('scrape', TITLE, missing, [['/metrics render, 64 servers × 8 ranks', 'under 50 ms']]);
  const servers = config.quick ? 4 : 64;
  const ranks = 8;
  const eventFiles: string[] = [];
  for (let s = 0; s < servers; s++) {
    const p = writePayload(`scrape-${s}`, {
      totalBytes: 48 << 10,
      batchBytes: 1 << 30,
      ranks,
      tokensPerBlock: 128,
      blocksPerRank: 2,
      seed: 100 + s,
    });
    eventFiles.push(...p.files);
  }
  const workers = await startTaskService<{ ports: number[] }>('sim-worker', { servers, chunks: 4, eventFiles });
  const relayPorts: number[] = [];
  for (let s = 0; s < servers; s++) relayPorts.push(await freePort());
  const webPort = await freePort();
  const metricsUrl = `http://127.0.0.1:${webPort}/metrics`;
  const relayArgs = relayPorts.flatMap((port, s) => [
    '--relay',
    `ctx${s}=http://127.0.0.1:${workers.info.ports[s]!}@127.0.0.1:${port}`,
  ]);
  const serve = await startService(
    process.execPath,
    [cliPath, 'serve', ...relayArgs, '--web.listen-address', `127.0.0.1:${webPort}`],
    {
      readyLine: false,
      ready: () => waitForHttp(metricsUrl),
    },
  ).catch(async (e: unknown) => {
    await workers.stop();
    throw e;
  });
  const samples: number[] = [];
  const floor: number[] = [];
  let bytes = 0;
  let series = 0;
  try {
    // traffic through every relay, so per-server request series exist, then let the relays drain the events
    for (let round = 0; round < 2; round++) {
      await Promise.all(
        relayPorts.map(async (port, s) => {
          const res = await fetch(`http://127.0.0.1:${port}/v1/completions`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-correlation-id': `scrape-${s}` },
            body: JSON.stringify({
              model: 'sim',
              prompt: Array.from({ length: 600 }, (_, i) => (i * 7919 + s) % 152_064),
              max_tokens: 4,
              stream: true,
            }),
          });
          await res.text();
        }),
      );
    }
    let previous = -1;
    for (let i = 0; i < 100; i++) {
      const r = await timedGet(metricsUrl);
      if (r.text.length === previous) break;
      previous = r.text.length;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const scrapes = config.quick ? 5 : 50;
    for (let i = 0; i < scrapes; i++) {
      const r = await timedGet(metricsUrl);
      if (r.status !== 200) throw new Error(`/metrics answered ${r.status}`);
      samples.push(r.ms);
      bytes = r.text.length;
      series = r.text.split('\n').filter((l) => l.length > 0 && !l.startsWith('#')).length;
      floor.push((await timedGet(`http://127.0.0.1:${webPort}/bench-not-found`)).ms);
    }
  } finally {
    await serve.stop();
    await workers.stop();
  }
  const p50 = median(samples);
  const p99 = quantile(samples, 0.99);
  return {
    id: 'scrape',
    title: TITLE,
    method:
      `\`kvsentinel serve\` relays ${servers} simulated CTX workers (one process) whose first \`/kv_cache_events\` drain returns ${ranks} ranks of events; ` +
      `two completions go through every relay first. Then ${samples.length} sequential \`GET /metrics\` (time to last byte, fresh request each); ` +
      'the baseline is a request for an unknown path on the same listener, interleaved (the HTTP floor).',
    rows: [
      {
        measurement: `/metrics render, ${servers} servers × ${ranks} ranks (p50)`,
        result: fmtMs(p50),
        baseline: `HTTP floor ${fmtMs(median(floor))}`,
        ratio: fmtRatio(p50 / median(floor)),
        target: 'under 50 ms',
        status: statusOf(p50 < 50),
      },
      {
        measurement: '/metrics render p99',
        result: fmtMs(p99),
        baseline: `HTTP floor ${fmtMs(quantile(floor, 0.99))}`,
        ratio: '—',
        target: '—',
        status: 'info',
      },
      {
        measurement: 'exposition size',
        result: `${fmtBytes(bytes)}, ${series.toLocaleString('en-US')} samples`,
        baseline: '—',
        ratio: '—',
        target: '—',
        status: 'info',
      },
    ],
    notes: [],
  };
}
