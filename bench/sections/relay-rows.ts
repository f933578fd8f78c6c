// §4's rows, statuses and notes, computed from the interleaved runs of relay.ts: every figure is the median over runs
// of a path's figure in that run; the targets (issue #17) are judged from these rows only.
import { fmtMs, fmtRatio, statusOf, type Row, type SectionReport, type Status } from '../lib/report.js';
import { median } from '../lib/stats.js';
import type { LoadParams, LoadResult } from '../tasks/load.js';
import type { OpenLoadParams, OpenLoadResult } from '../tasks/open-load.js';

export interface PathRuns<T> {
  readonly direct: T[];
  /** the bare Node proxy (bench/tasks/node-proxy.ts): Node's HTTP stack and undici, no analysis */
  readonly node: T[];
  readonly nginx: T[];
  readonly relay: T[];
}

export interface Sample<T> {
  readonly result: T;
  /** CPU ms per request of the worker, the proxy (nginx or the relay), the load generator; null where unknown */
  readonly workerCpu: number | null;
  readonly proxyCpu: number | null;
  readonly loadCpu: number | null;
  /** a Node proxy's CPU ms per request by thread: main (the forwarding loop), named (the relay's scan thread), other */
  readonly threads: { readonly main: number; readonly named: number; readonly other: number } | null;
}

export interface RelayMeasurements {
  readonly closed: PathRuns<Sample<LoadResult>>;
  readonly open: PathRuns<Sample<OpenLoadResult>>;
  readonly nginx: { readonly version: string } | { readonly why: string };
  readonly closedParams: LoadParams;
  readonly openParams: OpenLoadParams;
  /** peak RSS (VmHWM) of each proxy process over the section, bytes; null where not read */
  peakRss: { readonly relay: number | null; readonly node: number | null; readonly nginx: number | null };
  /** CPU ms per request of the relay's analysis alone (bench/tasks/scan-cost.ts); null where not measured */
  analysisCpu: number | null;
  readonly notes: string[];
}

export const RELAY_TARGETS: readonly (readonly [string, string])[] = [
  ['throughput at saturation', '≥ 0.6× nginx'],
  ['added latency p50 at a fixed rate', '≤ +1 ms over direct'],
  ['… relay vs nginx at a fixed rate', 'within 0.5 ms of nginx'],
  ['relay CPU per request, whole process', '≤ 0.4 ms'],
  ['relay CPU per request, forwarding thread', '≤ 0.15 ms'],
  ['failed requests through the relay', '0 (never lose a request)'],
];

const medOr = (xs: readonly (number | null)[]): number | null =>
  xs.length === 0 || xs.some((x) => x === null) ? null : median(xs as number[]);
const signed = (ms: number): string => `${ms < 0 ? '−' : '+'}${fmtMs(Math.abs(ms))}`;
const cpu = (ms: number | null): string => (ms === null ? 'n/a' : `${ms.toFixed(3)} ms`);
const rps = (r: LoadResult): number => r.requests / r.seconds;
const mb = (bytes: number | null): string => (bytes === null ? 'n/a' : `${(bytes / 1024 / 1024).toFixed(0)} MB`);

export function relayRows(m: RelayMeasurements): SectionReport & { notes: string[] } {
  const haveNginx = m.closed.nginx.length > 0;
  const why = 'why' in m.nginx ? m.nginx.why : '';
  const peerMissing = 'nginx not measured (see the nginx row)';
  const peerStatus = (met: boolean): Status => (haveNginx ? statusOf(met) : 'not measured');
  const c = m.closed;
  const o = m.open;
  const cl = <K extends keyof PathRuns<unknown>>(k: K, f: (r: LoadResult) => number): number =>
    c[k].length === 0 ? Number.NaN : median(c[k].map((s) => f(s.result)));
  const op = <K extends keyof PathRuns<unknown>>(k: K, f: (r: OpenLoadResult) => number): number =>
    o[k].length === 0 ? Number.NaN : median(o[k].map((s) => f(s.result)));
  const rpsD = cl('direct', rps);
  const rpsN = cl('nginx', rps);
  const haveNode = c.node.length > 0;
  const rpsB = cl('node', rps);
  const rpsR = cl('relay', rps);
  const p50 = (k: keyof PathRuns<unknown>): number => cl(k, (r) => r.latenciesMs.p50);
  const p99 = (k: keyof PathRuns<unknown>): number => cl(k, (r) => r.latenciesMs.p99);
  const op50 = (k: keyof PathRuns<unknown>): number => op(k, (r) => r.latenciesMs.p50);
  const op99 = (k: keyof PathRuns<unknown>): number => op(k, (r) => r.latenciesMs.p99);
  const relayCpu = medOr(c.relay.map((s) => s.proxyCpu));
  const nginxCpu = medOr(c.nginx.map((s) => s.proxyCpu));
  const nodeCpu = haveNode ? medOr(c.node.map((s) => s.proxyCpu)) : null;
  const mainCpu = medOr(c.relay.map((s) => s.threads?.main ?? null));
  const nodeMainCpu = haveNode ? medOr(c.node.map((s) => s.threads?.main ?? null)) : null;
  const scanCpu = medOr(c.relay.map((s) => s.threads?.named ?? null));
  const otherCpu = medOr(c.relay.map((s) => s.threads?.other ?? null));
  const workerD = medOr(c.direct.map((s) => s.workerCpu));
  const loadD = medOr(c.direct.map((s) => s.loadCpu));
  const openRelayCpu = medOr(o.relay.map((s) => s.proxyCpu));
  const openMain = medOr(o.relay.map((s) => s.threads?.main ?? null));
  const openScan = medOr(o.relay.map((s) => s.threads?.named ?? null));
  const openNginx = medOr(o.nginx.map((s) => s.proxyCpu));
  const relayErrors = [...c.relay, ...o.relay].reduce((n, s) => n + s.result.errors, 0);
  const nginxErrors = [...c.nginx, ...o.nginx].reduce((n, s) => n + s.result.errors, 0);
  const rows: Row[] = [
    {
      measurement: 'throughput at saturation',
      result: `${rpsR.toFixed(0)} req/s`,
      baseline: haveNginx
        ? `nginx ${rpsN.toFixed(0)} req/s; direct ${rpsD.toFixed(0)} req/s (relay ${fmtRatio(rpsR / rpsD)} direct)`
        : `${peerMissing}; direct ${rpsD.toFixed(0)} req/s`,
      ratio: haveNginx ? fmtRatio(rpsR / rpsN) : fmtRatio(rpsR / rpsD),
      target: '≥ 0.6× nginx',
      status: peerStatus(rpsR / rpsN >= 0.6),
    },
    {
      measurement: '… nginx at saturation',
      result: haveNginx ? `${rpsN.toFixed(0)} req/s` : `not measured: ${why}`,
      baseline: `direct ${rpsD.toFixed(0)} req/s`,
      ratio: haveNginx ? fmtRatio(rpsN / rpsD) : '—',
      target: '—',
      status: haveNginx ? 'info' : 'not measured',
    },
    {
      measurement: '… bare Node proxy at saturation (http.createServer + undici, no analysis)',
      result: haveNode ? `${rpsB.toFixed(0)} req/s` : 'not measured: the bare Node proxy did not run',
      baseline: haveNginx
        ? `nginx ${rpsN.toFixed(0)} req/s; relay ${rpsR.toFixed(0)} req/s (${fmtRatio(rpsR / rpsB)} of it)`
        : `${peerMissing}; relay ${rpsR.toFixed(0)} req/s (${fmtRatio(rpsR / rpsB)} of it)`,
      ratio: haveNode ? (haveNginx ? `${fmtRatio(rpsB / rpsN)} nginx` : `${fmtRatio(rpsB / rpsD)} direct`) : '—',
      target: '—',
      status: haveNode ? 'info' : 'not measured',
    },
    {
      measurement: 'latency p50 at saturation (time to last SSE byte)',
      result: `${fmtMs(p50('relay'))} (${signed(p50('relay') - p50('direct'))})`,
      baseline: `direct ${fmtMs(p50('direct'))}; ${haveNginx ? `nginx ${fmtMs(p50('nginx'))} (${signed(p50('nginx') - p50('direct'))})` : peerMissing}`,
      ratio: fmtRatio(p50('relay') / p50('direct')),
      target: '—',
      status: 'info',
    },
    {
      measurement: 'latency p99 at saturation',
      result: `${fmtMs(p99('relay'))} (${signed(p99('relay') - p99('direct'))})`,
      baseline: `direct ${fmtMs(p99('direct'))}; ${haveNginx ? `nginx ${fmtMs(p99('nginx'))} (${signed(p99('nginx') - p99('direct'))})` : peerMissing}`,
      ratio: fmtRatio(p99('relay') / p99('direct')),
      target: '—',
      status: 'info',
    },
    {
      measurement: `added latency p50 at a fixed rate (${m.openParams.rate} req/s)`,
      result: `${fmtMs(op50('relay'))} (${signed(op50('relay') - op50('direct'))})`,
      baseline: `direct ${fmtMs(op50('direct'))}`,
      ratio: fmtRatio(op50('relay') / op50('direct')),
      target: '≤ +1 ms over direct',
      status: statusOf(op50('relay') - op50('direct') <= 1),
    },
    {
      measurement: '… relay vs nginx at a fixed rate, p50',
      result: haveNginx
        ? `${signed(op50('relay') - op50('nginx'))} vs nginx`
        : `${fmtMs(op50('relay'))} (nginx not measured)`,
      baseline: haveNginx
        ? `nginx ${fmtMs(op50('nginx'))} (${signed(op50('nginx') - op50('direct'))} over direct)`
        : peerMissing,
      ratio: haveNginx ? fmtRatio(op50('relay') / op50('nginx')) : '—',
      target: 'within 0.5 ms of nginx',
      status: peerStatus(op50('relay') - op50('nginx') <= 0.5),
    },
    {
      measurement: '… bare Node proxy at a fixed rate, p50',
      result:
        haveNode && o.node.length > 0
          ? `${fmtMs(op50('node'))} (${signed(op50('node') - op50('direct'))})`
          : 'not measured: the bare Node proxy did not run',
      baseline: `direct ${fmtMs(op50('direct'))}; relay ${fmtMs(op50('relay'))}`,
      ratio: haveNode && o.node.length > 0 ? fmtRatio(op50('node') / op50('direct')) : '—',
      target: '—',
      status: haveNode && o.node.length > 0 ? 'info' : 'not measured',
    },
    {
      measurement: 'added latency p99 at a fixed rate',
      result: `${fmtMs(op99('relay'))} (${signed(op99('relay') - op99('direct'))})`,
      baseline: `direct ${fmtMs(op99('direct'))}; ${haveNginx ? `nginx ${fmtMs(op99('nginx'))} (${signed(op99('nginx') - op99('direct'))})` : peerMissing}`,
      ratio: fmtRatio(op99('relay') / op99('direct')),
      target: '—',
      status: 'info',
    },
    {
      measurement: 'relay CPU per request, whole process (saturation)',
      result: cpu(relayCpu),
      baseline: `${haveNginx ? `nginx ${cpu(nginxCpu)}` : peerMissing}; worker ${cpu(workerD)}, load generator ${cpu(loadD)} (direct)`,
      ratio:
        haveNginx && relayCpu !== null && nginxCpu !== null && nginxCpu > 0
          ? `${fmtRatio(relayCpu / nginxCpu)} nginx`
          : '—',
      target: '≤ 0.4 ms',
      status: relayCpu === null ? 'not measured' : statusOf(relayCpu <= 0.4),
    },
    {
      measurement: '… bare Node proxy CPU per request (saturation): the floor of a Node HTTP stack',
      result: cpu(nodeCpu),
      baseline: `${haveNginx ? `nginx ${cpu(nginxCpu)}` : peerMissing}; relay ${cpu(relayCpu)}`,
      ratio:
        haveNginx && nodeCpu !== null && nginxCpu !== null && nginxCpu > 0
          ? `${fmtRatio(nodeCpu / nginxCpu)} nginx`
          : '—',
      target: '—',
      status: nodeCpu === null ? 'not measured' : 'info',
    },
    {
      measurement: "… the relay's analysis alone (prompt scan and fingerprints, one thread, no I/O)",
      result: cpu(m.analysisCpu),
      baseline:
        nodeCpu !== null && m.analysisCpu !== null
          ? `bare Node proxy + analysis ${cpu(nodeCpu + m.analysisCpu)}: the least a Node relay that reads the prompt costs`
          : '—',
      ratio: '—',
      target: '—',
      status: m.analysisCpu === null ? 'not measured' : 'info',
    },
    {
      measurement: 'relay CPU per request, forwarding thread (event loop)',
      result: cpu(mainCpu),
      baseline: `bare Node proxy's event loop ${cpu(nodeMainCpu)} (no analysis); ${haveNginx ? `nginx ${cpu(nginxCpu)} (one thread does everything)` : peerMissing}`,
      ratio:
        haveNginx && mainCpu !== null && nginxCpu !== null && nginxCpu > 0
          ? `${fmtRatio(mainCpu / nginxCpu)} nginx`
          : '—',
      target: '≤ 0.15 ms',
      status: mainCpu === null ? 'not measured' : statusOf(mainCpu <= 0.15),
    },
    {
      measurement: '… scan thread (prompt ids, usage) / other threads (GC helpers, libuv pool)',
      result: `${cpu(scanCpu)} / ${cpu(otherCpu)}`,
      baseline: '—',
      ratio: '—',
      target: '—',
      status: 'info',
    },
    {
      measurement: `relay CPU per request at the fixed rate: process / forwarding thread / scan thread`,
      result: `${cpu(openRelayCpu)} / ${cpu(openMain)} / ${cpu(openScan)}`,
      baseline: haveNginx ? `nginx ${cpu(openNginx)}` : peerMissing,
      ratio: '—',
      target: '—',
      status: 'info',
    },
    {
      measurement: 'relay peak memory over all runs (VmHWM)',
      result: mb(m.peakRss.relay),
      baseline: `bare Node proxy ${mb(m.peakRss.node)}; ${haveNginx ? `nginx ${mb(m.peakRss.nginx)}` : peerMissing}`,
      ratio:
        m.peakRss.relay !== null && m.peakRss.node !== null
          ? `${fmtRatio(m.peakRss.relay / m.peakRss.node)} bare Node proxy`
          : '—',
      target: '—',
      status: m.peakRss.relay === null ? 'not measured' : 'info',
    },
    {
      measurement: 'failed requests through the relay',
      result: String(relayErrors),
      baseline: `${haveNginx ? `nginx ${nginxErrors}` : peerMissing}; direct 0`,
      ratio: '—',
      target: '0 (never lose a request)',
      status: statusOf(relayErrors === 0),
    },
  ];
  const perRun = (k: keyof PathRuns<unknown>): string => c[k].map((s) => rps(s.result).toFixed(0)).join('/');
  const perRunOpen = (k: keyof PathRuns<unknown>): string =>
    o[k].map((s) => s.result.latenciesMs.p50.toFixed(2)).join('/');
  const notes = [
    separation(relayCpu, mainCpu, scanCpu, otherCpu, haveNginx ? nginxCpu : null),
    ...(nodeCpu !== null && relayCpu !== null
      ? [nodeFloor(nodeCpu, nodeMainCpu, m.analysisCpu, haveNginx ? nginxCpu : null, relayCpu, mainCpu)]
      : []),
    `Per run — req/s at saturation: direct ${perRun('direct')}${haveNode ? `, bare Node proxy ${perRun('node')}` : ''}${haveNginx ? `, nginx ${perRun('nginx')}` : ''}, relay ${perRun('relay')}; ` +
      `p50 at ${m.openParams.rate} req/s (ms): direct ${perRunOpen('direct')}${haveNode ? `, bare Node proxy ${perRunOpen('node')}` : ''}${haveNginx ? `, nginx ${perRunOpen('nginx')}` : ''}, relay ${perRunOpen('relay')}; ` +
      `load generator send lag p99 at the fixed rate (in every latency alike): ${o.direct.map((s) => s.result.sendLagP99Ms.toFixed(2)).join('/')} ms.`,
    ...m.notes,
  ];
  const nginxText =
    'version' in m.nginx ? `nginx ${m.nginx.version} (Debian \`nginx-light\`)` : `nginx (not measured here: ${why})`;
  return {
    id: 'relay',
    title: '4. Relay overhead',
    method:
      `A simulated CTX worker (bench/tasks/sim-worker.ts, its own process) answers \`POST /v1/completions\` with 16 SSE chunks, a usage chunk and [DONE]. ` +
      `It is reached four ways, interleaved run by run: directly; through a bare Node proxy (bench/tasks/node-proxy.ts: \`http.createServer\` and an undici Pool ` +
      `streaming the body both ways, hop-by-hop headers dropped, nothing else — the floor of any proxy on Node's HTTP stack); through ${nginxText}, one process, \`proxy_pass\` to a keep-alive upstream, request and response ` +
      `bodies streamed (\`proxy_request_buffering off\`, \`proxy_buffering off\`), no access log; and through \`kvsentinel serve --relay\` (its own process, ` +
      `prompt scan, decision digest and usage included). Saturation: ${m.closedParams.concurrency} closed-loop clients (undici Pool, keep-alive), ` +
      `${m.closedParams.warmupSeconds} s warm-up and ${m.closedParams.measureSeconds} s measured, ${m.closedParams.promptBytes / 1000} KB prompts of token ids; ` +
      `throughput counts requests completed in the window, latency is to the last byte of requests started in it. Fixed rate: an open-loop generator sends ` +
      `${m.openParams.rate} req/s of the same prompts for ${m.openParams.warmupSeconds} s + ${m.openParams.measureSeconds} s, latency from each request's due time. ` +
      `CPU per request comes from /proc over each run (warm-up included), by thread for the relay (its scan thread names itself \`kvs-scan\`). ` +
      `All processes share the machine's cores; figures are medians over runs.`,
    rows,
    notes,
  };
}

/** What separates the relay from nginx, from this run's CPU figures. */
function separation(
  relay: number | null,
  main: number | null,
  scan: number | null,
  other: number | null,
  nginx: number | null,
): string {
  if (relay === null || main === null || scan === null || other === null)
    return 'CPU per request could not be read from /proc here.';
  const base =
    `Where the relay's CPU goes, per request at saturation: ${cpu(main)} on the forwarding thread — receiving and re-sending the 200 KB body and the SSE stream, ` +
    `and, since \`kvsentinel serve\` runs its state on the same event loop, recording the decision and outcome (the decision digest: the prompt's block keys, ` +
    `chained from the prefix fingerprints the scan thread sends) — ${cpu(scan)} on the scan thread (reading the prompt's ids and their fingerprints, the usage) and ${cpu(other)} on the other threads (V8's GC helpers).`;
  if (nginx === null) return base;
  return (
    `${base} nginx forwards the same bytes for ${cpu(nginx)}: the relay's forwarding thread alone costs ${fmtRatio(main / nginx)} of that — a Node event loop ` +
    `(JavaScript per chunk, a Buffer per socket read, requests that live long enough under load to be promoted and collected by full GCs, the state's digest) ` +
    `against nginx's C loop with fixed buffers — and its analysis off the forwarding thread (${cpu(relay - main)}) is what nginx does not do at all. On a machine ` +
    `whose cores the load generator, the worker and the proxy share, every CPU-millisecond per request is throughput lost, and at a fixed rate a busy machine ` +
    `(see the load average in the header) turns the relay's larger CPU share into queueing: the fixed-rate rows move the most from run to run.`
  );
}

/** What the bare Node proxy tells: how much of the relay's cost is Node's HTTP stack and how much its own work. */
function nodeFloor(
  node: number,
  nodeMain: number | null,
  analysis: number | null,
  nginx: number | null,
  relay: number,
  main: number | null,
): string {
  const vsNginx =
    nginx === null
      ? ''
      : ` — ${fmtRatio(node / nginx)} nginx's ${cpu(nginx)}, so Node's HTTP stack itself ${node <= nginx * 1.25 ? 'is not what separates the relay from nginx' : `accounts for ${cpu(node - nginx)} of the gap`}`;
  const own = relay - node;
  const floors =
    nodeMain === null || analysis === null
      ? ''
      : ` The floors of the two CPU targets, from this run: the bare proxy's event loop alone takes ${cpu(nodeMain)} per request ` +
        `(the forwarding-thread target is ≤ 0.15 ms: ${nodeMain > 0.15 ? "below what Node's HTTP stack costs with no analysis at all" : 'above it'}), ` +
        `and the bare proxy plus the analysis alone (${cpu(analysis)}, one thread, no I/O) is ${cpu(node + analysis)} (the whole-process target is ≤ 0.4 ms: ` +
        `${node + analysis >= 0.4 ? 'below that sum' : `${cpu(0.4 - node - analysis)} left for recording, the state and their garbage collection`}).`;
  return (
    `A bare Node proxy (http.createServer + undici, the same bytes, no analysis) costs ${cpu(node)} per request${vsNginx}. ` +
    `The relay's own work on top of that floor is ${cpu(own)} per request (${((100 * own) / relay).toFixed(0)}% of its CPU)` +
    (main === null
      ? ''
      : `, ${cpu(Math.max(0, main - node))} of it on the forwarding thread beyond the whole bare proxy`) +
    `: recording the exchange (keeping the body for a retry and the capture, copying it to the scan thread), the prompt scan, the decision digest on the state's event loop, and the garbage collection all of that causes.` +
    floors
  );
}
