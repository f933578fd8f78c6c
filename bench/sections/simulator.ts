// §7 Simulator: `kvsentinel sim run --preset seed --json`, wall time and simulated requests per second.
import { cliCommandMissing, cliPath } from '../lib/cli.js';
import { runProcess } from '../lib/proc.js';
import { fmtBytes, fmtMs, notMeasured, type RunConfig, type SectionReport } from '../lib/report.js';
import { median } from '../lib/stats.js';

const TITLE = '7. Simulator';

interface SimJson {
  readonly requests: number;
  readonly cache_hit_ratio: number;
  readonly turn_scatter_ratio: number;
}

interface DemoMeasurement {
  readonly traffic: string;
  readonly rss: number | null;
  readonly wallMs: number;
  readonly requests: number;
  readonly runs: number;
}

/** `kvsentinel demo` as a user runs it (the full 90 s, warm-up included; quick mode a few seconds of a small cluster), peak RSS. */
async function measureDemo(config: RunConfig): Promise<DemoMeasurement> {
  const quickSet = ['workload.concurrency=16', 'workload.trajectories=64'].flatMap((kv) => ['--set', kv]);
  const args = [cliPath, 'demo', '--json', '--no-progress', ...(config.quick ? ['--duration', '3s', ...quickSet] : [])];
  // each run drives 90 s of traffic: one run unless the section repeats slow runs anyway
  const runs = config.quick ? 1 : Math.min(config.slowRuns, 2);
  const rss: number[] = [];
  const walls: number[] = [];
  let requests = 0;
  for (let run = 0; run < runs; run++) {
    const r = await runProcess(process.execPath, args, { measureRss: true, timeoutMs: 10 * 60_000 });
    if (r.code !== 0)
      throw new Error(`kvsentinel demo --json exited with ${String(r.code)}:\n${r.stderr.slice(-3000)}`);
    requests = (JSON.parse(r.stdout) as { stats: { requests: number } }).stats.requests;
    walls.push(r.wallMs);
    if (r.maxRssBytes !== null) rss.push(r.maxRssBytes);
  }
  return {
    traffic: config.quick ? '3 s of a small workload' : '90 s of traffic, preset seed, the demo workload',
    rss: rss.length > 0 ? median(rss) : null,
    wallMs: median(walls),
    requests,
    runs,
  };
}

export async function simulatorSection(config: RunConfig): Promise<SectionReport> {
  const missing = await cliCommandMissing(['sim', 'run']);
  if (missing !== null)
    return notMeasured('simulator', TITLE, missing, [
      ['sim run --preset seed wall time', '—'],
      ['requests simulated per second', '—'],
    ]);
  // quick mode shrinks the workload through the documented --set knobs; a full run is the preset as shipped
  const quickSet = [
    'workload.trajectories=16',
    'workload.concurrency=8',
    'workload.turns_min=2',
    'workload.turns_max=3',
  ].flatMap((kv) => ['--set', kv]);
  const args = [cliPath, 'sim', 'run', '--preset', 'seed', ...(config.quick ? quickSet : []), '--json'];
  const walls: number[] = [];
  const rss: number[] = [];
  let result: SimJson | null = null;
  for (let run = 0; run < config.slowRuns; run++) {
    const r = await runProcess(process.execPath, args, { measureRss: true, timeoutMs: 30 * 60_000 });
    if (r.code !== 0)
      throw new Error(
        `kvsentinel sim run --preset seed --json exited with ${String(r.code)}:\n${r.stderr.slice(-3000)}`,
      );
    let json: SimJson;
    try {
      json = JSON.parse(r.stdout) as SimJson;
    } catch {
      throw new Error(`kvsentinel sim run --preset seed --json printed no JSON:\n${r.stdout.slice(0, 1000)}`);
    }
    if (typeof json.requests !== 'number' || json.requests <= 0)
      throw new Error(`sim run printed no request count: ${r.stdout.slice(0, 300)}`);
    if (result !== null && result.requests !== json.requests)
      throw new Error('sim run --preset seed is not reproducible: request counts differ between runs');
    result = json;
    walls.push(r.wallMs);
    if (r.maxRssBytes !== null) rss.push(r.maxRssBytes);
  }
  const wall = median(walls);
  const requests = result!.requests;
  const demo = await measureDemo(config);
  return {
    id: 'simulator',
    title: TITLE,
    method:
      '`kvsentinel sim run --preset seed --json` (virtual time), run as an operator would, in a fresh process per run; ' +
      'wall time includes Node start-up. Requests simulated per second = the `requests` it reports / wall time.',
    rows: [
      {
        measurement: 'sim run --preset seed wall time',
        result: fmtMs(wall),
        baseline: '—',
        ratio: '—',
        target: '—',
        status: 'info',
      },
      {
        measurement: 'requests simulated per second',
        result: `${(requests / (wall / 1000)).toFixed(0)} req/s (${requests.toLocaleString('en-US')} requests)`,
        baseline: '—',
        ratio: '—',
        target: '—',
        status: 'info',
      },
      {
        measurement: 'sim run --preset seed peak RSS',
        result: rss.length > 0 ? fmtBytes(median(rss)) : 'not measured: /usr/bin/time not found',
        baseline: '—',
        ratio: '—',
        target: '—',
        status: 'info',
      },
      {
        measurement: `demo peak RSS (${demo.traffic})`,
        result: demo.rss !== null ? fmtBytes(demo.rss) : 'not measured: /usr/bin/time not found',
        baseline: '—',
        ratio: '—',
        target: '—',
        status: 'info',
      },
    ],
    notes: [
      `Per run wall time: ${walls.map((w) => fmtMs(w)).join(', ')}. The seed preset reported cache_hit_ratio ${result!.cache_hit_ratio}, turn_scatter_ratio ${result!.turn_scatter_ratio}.`,
      `\`kvsentinel demo --json\` (one process: the live simulator with the demo workload (c = 48), a relay per CTX worker, the sidecar's state and web server) ran ${demo.runs} time(s), ${fmtMs(demo.wallMs)} wall, ${demo.requests.toLocaleString('en-US')} requests; the peak RSS is the median over runs.`,
    ],
  };
}
