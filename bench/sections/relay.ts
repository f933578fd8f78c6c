// §4 Relay overhead: the same simulated CTX worker measured directly, through a bare Node proxy (http + undici, no
// analysis: the floor of Node's HTTP stack), through nginx (a plain streaming reverse proxy, the peer) and through
// `kvsentinel serve --relay`, interleaved run by run on the same cores: a closed-loop load at
// saturation (throughput, CPU per request by process and by relay thread) and an open-loop load at a fixed rate
// well under saturation (added latency). Rows and statuses are computed in relay-rows.ts.
import { cliCommandMissing, cliPath } from '../lib/cli.js';
import { freePort, waitForHttp } from '../lib/net.js';
import { ensureNginx, startNginxProxy, type NginxProxy } from '../lib/nginx.js';
import { runNodeTask, startService, startTaskService, type Service } from '../lib/proc.js';
import { peakRssBytes, processCpuMs, threadCpuMs, type ThreadCpu } from '../lib/proc-cpu.js';
import { formatTop, profileDir, topSelfTime } from '../lib/profile.js';
import { notMeasured, type RunConfig, type SectionReport } from '../lib/report.js';
import type { LoadParams, LoadResult } from '../tasks/load.js';
import type { OpenLoadParams, OpenLoadResult } from '../tasks/open-load.js';
import type { ScanCostResult } from '../tasks/scan-cost.js';
import { relayRows, RELAY_TARGETS, type PathRuns, type RelayMeasurements } from './relay-rows.js';

const TITLE = '4. Relay overhead';
/** the relay's scan thread names itself so (src/sources/relay/ctx-scan-thread.ts) */
const SCAN_THREAD = 'kvs-scan';

interface Served {
  readonly url: string;
  readonly pid: number | undefined;
  stop(): Promise<void>;
}

async function startServe(workerUrl: string, nodeFlags: readonly string[]): Promise<Served> {
  const relayPort = await freePort();
  let webPort = await freePort();
  // two free-port probes can hand out the same port (it is only bound later): the CLI refuses that, so ask again
  while (webPort === relayPort) webPort = await freePort();
  const url = `http://127.0.0.1:${relayPort}`;
  const service = await startService(
    process.execPath,
    [
      ...nodeFlags,
      cliPath,
      'serve',
      '--relay',
      `ctx0=${workerUrl}@127.0.0.1:${relayPort}`,
      '--web.listen-address',
      `127.0.0.1:${webPort}`,
    ],
    { readyLine: false, ready: () => waitForHttp(`${url}/health`), stopGraceMs: nodeFlags.length > 0 ? 60_000 : 5000 },
  );
  return { url, pid: service.pid, stop: () => service.stop() };
}

const diff = (a: number | null, b: number | null): number | null => (a === null || b === null ? null : b - a);
const threadDiff = (a: ThreadCpu | null, b: ThreadCpu | null): ThreadCpu | null =>
  a === null || b === null ? null : { main: b.main - a.main, named: b.named - a.named, other: b.other - a.other };

export async function relaySection(config: RunConfig): Promise<SectionReport> {
  const missing = await cliCommandMissing(['serve']);
  if (missing !== null) return notMeasured('relay', TITLE, missing, RELAY_TARGETS);
  const nginx = ensureNginx({ install: !config.quick });
  const worker = await startTaskService<{ ports: number[] }>('sim-worker', { servers: 1, chunks: 16, eventFiles: [] });
  const workerPort = worker.info.ports[0]!;
  const workerUrl = `http://127.0.0.1:${workerPort}`;
  let serve: Served | undefined;
  let peer: NginxProxy | undefined;
  let floor: Service<{ ports: number[] }> | undefined;
  const closed: LoadParams = {
    origin: '',
    path: '/v1/completions',
    concurrency: config.quick ? 16 : 256,
    warmupSeconds: config.quick ? 1 : 3,
    measureSeconds: config.quick ? 2 : 10,
    promptBytes: 200_000,
  };
  const open: OpenLoadParams = {
    origin: '',
    path: '/v1/completions',
    rate: config.quick ? 20 : 100,
    warmupSeconds: config.quick ? 0.5 : 2,
    measureSeconds: config.quick ? 1 : 10,
    promptBytes: 200_000,
    clients: 32,
  };
  const m: RelayMeasurements = {
    closed: { direct: [], node: [], nginx: [], relay: [] },
    open: { direct: [], node: [], nginx: [], relay: [] },
    nginx: 'why' in nginx ? { why: nginx.why } : { version: nginx.version },
    closedParams: closed,
    openParams: open,
    peakRss: { relay: null, node: null, nginx: null },
    analysisCpu: null,
    notes: [],
  };
  try {
    serve = await startServe(workerUrl, []);
    floor = await startTaskService<{ ports: number[] }>('node-proxy', { upstream: workerUrl });
    if ('path' in nginx)
      peer = await startNginxProxy(nginx.path, { host: '127.0.0.1', port: workerPort }, await freePort());
    const relayPid = serve.pid;
    const paths: [keyof PathRuns<unknown>, string, number | undefined][] = [
      ['direct', workerUrl, undefined],
      ['node', `http://127.0.0.1:${floor.info.ports[0]!}`, floor.pid],
      ...(peer !== undefined
        ? [['nginx', peer.url, peer.pid] as [keyof PathRuns<unknown>, string, number | undefined]]
        : []),
      ['relay', serve.url, relayPid],
    ];
    // by thread for the Node processes (the relay, and the bare Node proxy, whose event loop is the floor of the
    // relay's forwarding thread)
    const cpuAround = async <T extends { totalRequests: number }>(
      pid: number | undefined,
      byThread: boolean,
      run: () => Promise<T>,
    ) => {
      const w0 = processCpuMs(worker.pid);
      const p0 = processCpuMs(pid);
      const t0 = byThread ? threadCpuMs(pid, SCAN_THREAD) : null;
      const result = await run();
      const n = Math.max(1, result.totalRequests);
      const per = (x: number | null): number | null => (x === null ? null : x / n);
      const threads = threadDiff(t0, byThread ? threadCpuMs(pid, SCAN_THREAD) : null);
      return {
        result,
        workerCpu: per(diff(w0, processCpuMs(worker.pid))),
        proxyCpu: pid === undefined ? null : per(diff(p0, processCpuMs(pid))),
        threads:
          threads === null ? null : { main: threads.main / n, named: threads.named / n, other: threads.other / n },
      };
    };
    for (let run = 0; run < config.runs; run++) {
      for (const [name, origin, pid] of paths) {
        const r = await cpuAround(pid, name === 'relay' || name === 'node', () =>
          runNodeTask<LoadResult>('load', { ...closed, origin }),
        );
        if (name === 'direct' && r.result.errors > 0)
          throw new Error(`direct load had ${r.result.errors} failed requests: the harness is broken`);
        m.closed[name].push({ ...r, loadCpu: r.result.cpuMs / Math.max(1, r.result.totalRequests) });
      }
    }
    // as many runs as at saturation: the fixed-rate latencies move the most from run to run (a shared machine's
    // scheduling decides a sub-millisecond figure)
    for (let run = 0; run < config.runs; run++) {
      for (const [name, origin, pid] of paths) {
        const r = await cpuAround(pid, name === 'relay' || name === 'node', () =>
          runNodeTask<OpenLoadResult>('open-load', { ...open, origin }),
        );
        if (name === 'direct' && r.result.errors > 0)
          throw new Error(`direct open-loop load had ${r.result.errors} failed requests: the harness is broken`);
        m.open[name].push({ ...r, loadCpu: null });
      }
    }
    // each proxy ran every run in one process: its peak memory over the whole section
    m.peakRss = { relay: peakRssBytes(relayPid), node: peakRssBytes(floor.pid), nginx: peakRssBytes(peer?.pid) };
    // the analysis alone (no forwarding), in a process of its own while nothing else runs
    const scan = await runNodeTask<ScanCostResult>('scan-cost', {
      promptBytes: closed.promptBytes,
      prompts: closed.concurrency,
      reps: config.quick ? 200 : 3000,
    });
    m.analysisCpu = scan.cpuMsPerRequest;
  } finally {
    await serve?.stop();
    await floor?.stop();
    await peer?.stop();
  }
  const report = relayRows(m);
  try {
    if (report.rows.some((r) => r.status === 'missed') && !config.quick)
      report.notes.push(await profileNote(workerUrl, closed));
  } finally {
    await worker.stop();
  }
  return report;
}

/** A `node --cpu-prof` profile of the relay under the closed-loop load: where its main thread spends its time. */
async function profileNote(workerUrl: string, closed: LoadParams): Promise<string> {
  const prof = profileDir();
  const profiled = await startServe(workerUrl, prof.flags);
  try {
    await runNodeTask<LoadResult>('load', { ...closed, origin: profiled.url });
  } finally {
    await profiled.stop();
  }
  let top: ReturnType<typeof topSelfTime>;
  try {
    top = topSelfTime(prof.dir, 12);
  } catch {
    return '**Target missed.** The profile of the sidecar could not be read (it did not write one on SIGTERM).';
  }
  return (
    `**Target missed — profile** of \`kvsentinel serve\` during one closed-loop run (\`node --cpu-prof\`, main thread, self time of ${top.totalMs.toFixed(0)} ms): ` +
    `${formatTop(top.entries)}.`
  );
}
