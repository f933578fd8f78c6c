// §4 Relay overhead: the same closed-loop load (256 concurrent clients, 200 KB prompts, SSE responses) against a
// simulated CTX worker directly and through `kvsentinel serve --relay`, interleaved run by run.
import { cliCommandMissing, cliPath } from '../lib/cli.js';
import { freePort, waitForHttp } from '../lib/net.js';
import { runNodeTask, startService, startTaskService } from '../lib/proc.js';
import { fmtMs, fmtRatio, notMeasured, statusOf, type Row, type RunConfig, type SectionReport } from '../lib/report.js';
import { median } from '../lib/stats.js';
import type { LoadParams, LoadResult } from '../tasks/load.js';

const TITLE = '4. Relay overhead';

export async function relaySection(config: RunConfig): Promise<SectionReport> {
  const missing = await cliCommandMissing(['serve']);
  if (missing !== null) return notMeasured('relay', TITLE, missing, [
      ['added latency p50', 'p50 under +1 ms'],
      ['throughput vs direct', '≥ 0.9× direct'],
    ]);
  const worker = await startTaskService<{ ports: number[] }>('sim-worker', { servers: 1, chunks: 16, eventFiles: [] });
  const relayPort = await freePort();
  const webPort = await freePort();
  const workerUrl = `http://127.0.0.1:${worker.info.ports[0]!}`;
  const relayUrl = `http://127.0.0.1:${relayPort}`;
  const serve = await startService(
    process.execPath,
    [cliPath, 'serve', '--relay', `ctx0=${workerUrl}@127.0.0.1:${relayPort}`, '--web.listen-address', `127.0.0.1:${webPort}`],
    { readyLine: false, ready: () => waitForHttp(`${relayUrl}/health`) },
  ).catch(async (e: unknown) => {
    await worker.stop();
    throw e;
  });
  const concurrency = config.quick ? 16 : 256;
  const base: Omit<LoadParams, 'origin'> = {
    path: '/v1/completions',
    concurrency,
    requestsPerClient: config.quick ? 2 : 8,
    warmupPerClient: 1,
    promptBytes: 200_000,
  };
  const direct: LoadResult[] = [];
  const relayed: LoadResult[] = [];
  try {
    for (let run = 0; run < config.runs; run++) {
      const d = await runNodeTask<LoadResult>('load', { ...base, origin: workerUrl });
      if (d.errors > 0) throw new Error(`direct load had ${d.errors} failed requests: the harness is broken`);
      direct.push(d);
      relayed.push(await runNodeTask<LoadResult>('load', { ...base, origin: relayUrl }));
    }
  } finally {
    await serve.stop();
    await worker.stop();
  }
  const med = (rs: LoadResult[], f: (r: LoadResult) => number): number => median(rs.map(f));
  const p50d = med(direct, (r) => r.latenciesMs.p50);
  const p50r = med(relayed, (r) => r.latenciesMs.p50);
  const p99d = med(direct, (r) => r.latenciesMs.p99);
  const p99r = med(relayed, (r) => r.latenciesMs.p99);
  const rps = (r: LoadResult): number => r.requests / r.seconds;
  const rpsD = med(direct, rps);
  const rpsR = med(relayed, rps);
  const relayErrors = relayed.reduce((n, r) => n + r.errors, 0);
  const rows: Row[] = [
    {
      measurement: 'added latency p50 (time to last SSE byte)',
      result: `${fmtMs(p50r)} (+${fmtMs(p50r - p50d)})`,
      baseline: `direct ${fmtMs(p50d)}`,
      ratio: fmtRatio(p50r / p50d),
      target: 'p50 under +1 ms',
      status: statusOf(p50r - p50d < 1),
    },
    {
      measurement: 'added latency p99',
      result: `${fmtMs(p99r)} (+${fmtMs(p99r - p99d)})`,
      baseline: `direct ${fmtMs(p99d)}`,
      ratio: fmtRatio(p99r / p99d),
      target: '—',
      status: 'info',
    },
    {
      measurement: 'throughput',
      result: `${rpsR.toFixed(0)} req/s`,
      baseline: `direct ${rpsD.toFixed(0)} req/s`,
      ratio: fmtRatio(rpsR / rpsD),
      target: '≥ 0.9× direct',
      status: statusOf(rpsR / rpsD >= 0.9),
    },
    {
      measurement: 'failed requests through the relay',
      result: String(relayErrors),
      baseline: '0 direct',
      ratio: '—',
      target: '0 (never lose a request)',
      status: statusOf(relayErrors === 0),
    },
  ];
  return {
    id: 'relay',
    title: TITLE,
    method:
      `A simulated CTX worker (bench/tasks/sim-worker.ts, its own process) answers \`POST /v1/completions\` with ${16} SSE chunks, a usage chunk and [DONE]. ` +
      `A load process runs ${concurrency} closed-loop clients (undici Pool, keep-alive), each sending ${base.requestsPerClient} requests after ${base.warmupPerClient} warm-up ` +
      `with a ${base.promptBytes / 1000} KB prompt of token ids, once against the worker and once through \`kvsentinel serve --relay\` (its own process), interleaved per run. ` +
      `Latency is time to the last byte; figures are medians over runs of each run's percentile.`,
    rows,
    notes: [
      `Per run p50 direct/relay (ms): ${direct.map((d, i) => `${d.latenciesMs.p50.toFixed(1)}/${relayed[i]!.latenciesMs.p50.toFixed(1)}`).join(', ')}; ` +
        `req/s direct/relay: ${direct.map((d, i) => `${rps(d).toFixed(0)}/${rps(relayed[i]!).toFixed(0)}`).join(', ')}.`,
    ],
  };
}
