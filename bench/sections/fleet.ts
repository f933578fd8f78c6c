// §9 Fleet size: the sidecar's state, relay event paths and exporter holding 64 servers × 8 attention-DP ranks at
// 50k resident blocks per rank (25.6 M blocks in worker truth and as many in the router replica), under the churn
// such a fleet emits, beside the same section at 1 server × 8 ranks (the per-unit baseline).
import { rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { DEFAULT_RETAIN_READ_BYTES } from '../../src/core/relay/read-retention.js';
import { runNodeTask } from '../lib/proc.js';
import { formatTop, profileDir, topSelfTime } from '../lib/profile.js';
import {
  fmtBytes,
  fmtMs,
  fmtRate,
  fmtRatio,
  statusOf,
  type Row,
  type RunConfig,
  type SectionReport,
} from '../lib/report.js';
import { median } from '../lib/stats.js';
import type { FleetParams, FleetResult } from '../tasks/fleet.js';

const TITLE = '9. Fleet size';
/** a step per rank every 10 ms: the issue's ~100 steps/s (50,000 batches/s for 64 × 8 ranks) */
const STEPS_PER_SECOND = 100;
const TABLE_TARGET = 24;
/** one core at the fleet's 100k events/s */
const CPU_TARGET_MS = 10;
const RENDER_TARGET_MS = 50;
/** two evaluations a second apart (hysteresis on after 2) and the poll that brings the gap */
const LATENCY_TARGET_MS = 3000;
/** the relay event buffer's default byte bound (DEFAULT_EVENT_BUFFER_OPTIONS.maxBytes) */
const RELAY_BOUND = 64 * 2 ** 20;

/** what one relay of `servers` may keep of its read history: its equal part of relay.retain_read_bytes, within its bound */
function readShare(servers: number): number {
  return Math.min(RELAY_BOUND, DEFAULT_RETAIN_READ_BYTES / servers);
}

/** what bench/task.ts adds to every result: the child's peak RSS (getrusage) */
type TaskResult = FleetResult & { readonly taskMaxRssBytes: number };

interface Derived {
  readonly r: TaskResult;
  readonly cpuPer1000: number;
  readonly rate: number;
  readonly fleetRate: number;
  readonly perEntry: number;
  /** the churn's peak RSS (the fill's own transient left out: no sidecar sees a fill of event objects) */
  readonly peakRss: number;
}

function derive(r: TaskResult, p: FleetParams): Derived {
  return {
    r,
    cpuPer1000: (1000 * r.sidecarCpuSeconds) / (r.measuredEvents / 1000),
    rate: r.measuredBatches / r.sidecarWallSeconds,
    fleetRate: p.servers * p.ranks * STEPS_PER_SECOND,
    perEntry: r.retainedBytesPerEntry,
    peakRss: r.churnPeakRssBytes,
  };
}

function params(servers: number, config: RunConfig, extra: Partial<FleetParams> = {}): FleetParams {
  const q = config.quick;
  return {
    servers,
    ranks: q ? 4 : 8,
    blocksPerRank: q ? 2_000 : 50_000,
    tokensPerBlock: 32,
    blocksPerBatch: 4,
    stepsPerSecond: STEPS_PER_SECOND,
    pollMs: 100,
    // the relays keep read events 10 s: the warm-up lets their retention reach its steady size
    warmupSeconds: q ? 1 : 10,
    measureSeconds: q ? 1 : servers === 1 ? 24 : 3,
    ...extra,
  };
}

export async function fleetSection(config: RunConfig): Promise<SectionReport> {
  const fleetServers = config.quick ? 2 : 64;
  const big = params(fleetServers, config);
  const unit = params(1, config);
  const nodeFlags = ['--max-old-space-size=12288'];
  const load0 = loadavg();
  const prof = config.quick ? null : profileDir();
  const fleet = derive(
    await runNodeTask<TaskResult>('fleet', prof === null ? big : { ...big, profileDir: prof.dir }, { nodeFlags }),
    big,
  );
  const load1 = loadavg();
  const units: Derived[] = [];
  for (let i = 0; i < config.slowRuns; i++)
    units.push(derive(await runNodeTask<TaskResult>('fleet', unit, { nodeFlags }), unit));
  const u = (pick: (d: Derived) => number): number => median(units.map(pick));
  const r = fleet.r;
  const label = `${big.servers} servers × ${big.ranks} ranks`;
  const unitLabel = `1 server × ${unit.ranks} ranks`;
  const blocks = r.blocks.toLocaleString('en-US');
  const renderP50 = median(r.scrapeMs);
  const evalP50 = median(r.evaluationMs);
  const tableBytes = 2 * r.blocks * TABLE_TARGET;
  const rssTarget = tableBytes + 384 * 2 ** 20;
  const latency = r.faultFleetMs;
  const rows: Row[] = [
    {
      measurement: `peak RSS, ${label}, ${blocks} blocks in each table, steady churn (the high-water mark from the end of the fill)`,
      result: fmtBytes(fleet.peakRss),
      baseline: `${unitLabel} ${fmtBytes(u((d) => d.peakRss))}`,
      ratio: fmtRatio(fleet.peakRss / u((d) => d.peakRss)),
      target: `≤ ${fmtBytes(rssTarget)} (${TABLE_TARGET} B × ${(2 * r.blocks).toLocaleString('en-US')} table entries + 384 MiB)`,
      status: statusOf(fleet.peakRss <= rssTarget),
    },
    {
      measurement: `… table memory per block (worker truth + router replica, after the fill, full GC)`,
      result: `${fleet.perEntry.toFixed(1)} B/block (RSS +${r.rssFillBytesPerEntry.toFixed(1)})`,
      baseline: `${unitLabel} ${u((d) => d.perEntry).toFixed(1)} B/block`,
      ratio: fmtRatio(fleet.perEntry / u((d) => d.perEntry)),
      target: `≤ ${TABLE_TARGET} B/block`,
      status: statusOf(fleet.perEntry <= TABLE_TARGET),
    },
    {
      measurement: `… relays' event buffers at steady churn (read events kept 10 s within ${fmtBytes(DEFAULT_RETAIN_READ_BYTES)} for all relays, ≤ 64 MiB per relay)`,
      result: fmtBytes(r.retainedRelayBytes),
      baseline: `${unitLabel} ${fmtBytes(u((d) => d.r.retainedRelayBytes))}`,
      ratio: '—',
      target: '—',
      status: 'info',
    },
    {
      measurement: `CPU per 1,000 events, ${label} (process, all threads; evaluations included, scrapes not)`,
      result: `${fleet.cpuPer1000.toFixed(1)} ms`,
      baseline: `${unitLabel} ${u((d) => d.cpuPer1000).toFixed(1)} ms`,
      ratio: fmtRatio(fleet.cpuPer1000 / u((d) => d.cpuPer1000)),
      target: `≤ ${CPU_TARGET_MS} ms (one core at the fleet's 100k events/s)`,
      status: statusOf(fleet.cpuPer1000 <= CPU_TARGET_MS),
    },
    {
      measurement: `sustained rate vs the fleet's ${fmtRate(fleet.fleetRate, 'batches/s')} (wall, generation excluded)`,
      result: `${fmtRate(fleet.rate, 'batches/s')} (${fmtRatio(fleet.rate / fleet.fleetRate)}); per CPU-second ${fmtRate(fleet.r.measuredBatches / fleet.r.sidecarCpuSeconds, 'batches')}`,
      baseline: `${unitLabel} ${fmtRate(
        u((d) => d.rate),
        'batches/s',
      )} vs its ${fmtRate(units[0]!.fleetRate, 'batches/s')} (${fmtRatio(u((d) => d.rate / d.fleetRate))})`,
      ratio: fmtRatio(fleet.rate / fleet.fleetRate),
      target: '≥ 1× (keeps up)',
      status: statusOf(fleet.rate >= fleet.fleetRate),
    },
    {
      measurement: `/metrics render, ${label}, ${blocks} blocks (p50, after an evaluation)`,
      result: fmtMs(renderP50),
      baseline: `${unitLabel} ${fmtMs(u((d) => median(d.r.scrapeMs)))}`,
      ratio: fmtRatio(renderP50 / u((d) => median(d.r.scrapeMs))),
      target: `under ${RENDER_TARGET_MS} ms`,
      status: statusOf(renderP50 < RENDER_TARGET_MS),
    },
    {
      measurement: '… one evaluation of the rules (evaluate), p50',
      result: fmtMs(evalP50),
      baseline: `${unitLabel} ${fmtMs(u((d) => median(d.r.evaluationMs)))}`,
      ratio: fmtRatio(evalP50 / u((d) => median(d.r.evaluationMs))),
      target: '—',
      status: 'info',
    },
    {
      measurement: `verdict latency: another consumer drains one server's queue → \`${r.faultFinding}\` on (fleet clock)`,
      result:
        latency === null ? 'not raised within 30 s' : `${fmtMs(latency)} (wall ${fmtMs(r.faultWallMs!)} in this run)`,
      baseline: `${unitLabel} ${fmtMs(u((d) => d.r.faultFleetMs ?? Infinity))} (wall ${fmtMs(u((d) => d.r.faultWallMs ?? Infinity))})`,
      ratio: latency === null ? '—' : fmtRatio(latency / u((d) => d.r.faultFleetMs ?? Infinity)),
      target: `≤ ${fmtMs(LATENCY_TARGET_MS)} (two evaluations a second apart)`,
      status: statusOf(latency !== null && latency <= LATENCY_TARGET_MS),
    },
  ];
  const notes = [sizing(fleet, units, big), samples(fleet, units, big, load0, load1)];
  notes.push(limits(fleet, units, big));
  if (prof !== null && rows.some((row) => row.status === 'missed')) {
    // the same churn at 1 server, profiled too: what grows with the fleet shows as a share that moves
    const unitProf = profileDir();
    // as many events under the profiler as the fleet's second of churn
    const profileSeconds = big.servers / unit.servers;
    await runNodeTask<TaskResult>(
      'fleet',
      { ...unit, measureSeconds: 1, profileDir: unitProf.dir, profileSeconds },
      { nodeFlags },
    );
    notes.push(profileNote(prof.dir, unitProf.dir, profileSeconds, big.servers));
    rmSync(unitProf.dir, { recursive: true, force: true });
  }
  if (prof !== null) rmSync(prof.dir, { recursive: true, force: true });
  if (r.hashMismatches > 0 || units.some((d) => d.r.hashMismatches > 0))
    throw new Error('fleet: the hash verifier found mismatches in the generated events');
  return { id: 'fleet', title: TITLE, method: method(big, unit, r.blocks), rows, notes };
}

function method(p: FleetParams, unit: FleetParams, blocks: number): string {
  return (
    `One child process holds what \`kvsentinel serve\` holds in relay mode for ${p.servers} CTX servers × ${p.ranks} attention-DP ranks: ` +
    `the daemon's state (its \`serve\` preset: 10-minute window, evaluations at most every second, hysteresis 2/5), one relay event path per server ` +
    "(the relay's RelayEventPath: drain, split into items, event buffer, parse off the poll's path, observations) polled by a router, and the Prometheus exporter. " +
    'No sockets: a drain returns the bytes a worker would send, the router counts its answer and drops it (§4 and §6 measure the HTTP around it). ' +
    `Every rank steps ${STEPS_PER_SECOND} times per second of the fleet's clock; a step stores a batch of ${p.blocksPerBatch} fresh blocks of ${p.tokensPerBlock} tokens ` +
    '(real v1_block_key chains, which the state verifies) and, once the rank holds ' +
    `${p.blocksPerRank.toLocaleString('en-US')} blocks, removes its oldest batch. Fill: the fleet's first steps handed to the state as event objects ` +
    `(the JSON parse of ${blocks.toLocaleString('en-US')} blocks of tokens would take hours; placeholder items keep the relays numbering them). ` +
    `Churn: from TensorRT-LLM's compact \`/kv_cache_events\` JSON (bench/lib/fleet-workload.ts, checked byte for byte against the project's serializer), one poll of every relay per ${p.pollMs} ms of fleet time, ` +
    `${p.warmupSeconds} s of warm-up (the relays keep read events 10 s), then ${p.measureSeconds} s measured; an evaluation per second of fleet time (the daemon's timeline sampler) and three scrapes after it (timed; their CPU is counted apart, as it follows the scrape interval). ` +
    "The clock is the fleet's, so windows and retention see what a sidecar that keeps up would see; the body generation is timed apart and left out of the sidecar's wall and CPU time. " +
    "Fault: another consumer drains one server's queue once (every rank's next events never reach the relay); latency runs until the evaluation that has the finding on. " +
    `The ${p.servers}-server run is one process, once (its fill and warm-up take minutes); the 1-server baseline is the median of fresh runs, ${unit.measureSeconds} s measured.`
  );
}

function sizing(f: Derived, units: readonly Derived[], p: FleetParams): string {
  const r = f.r;
  const servers = p.servers;
  const rankBytes = 2 * p.blocksPerRank * f.perEntry;
  const eventsPerServer = p.ranks * STEPS_PER_SECOND * 2;
  const coresPerServer = (eventsPerServer * f.cpuPer1000) / 1000 / 1000;
  const relayPerServer = r.retainedRelayBytes / servers;
  const rest = f.peakRss - 2 * r.blocks * f.perEntry - r.retainedRelayBytes;
  const unitCpu = median(units.map((d) => d.cpuPer1000));
  return (
    `**Sizing.** Per rank (${p.blocksPerRank.toLocaleString('en-US')} resident blocks in worker truth and in the replica): ${fmtBytes(rankBytes)} of tables, ` +
    `${(2 * STEPS_PER_SECOND).toLocaleString('en-US')} events/s (${STEPS_PER_SECOND} steps) costing ${((2 * STEPS_PER_SECOND * f.cpuPer1000) / 1000).toFixed(1)} ms of CPU per second. ` +
    `Per server (${p.ranks} ranks): ${fmtBytes(p.ranks * rankBytes)} of tables plus its relay's event buffer, ${fmtBytes(relayPerServer)} here ` +
    `(read events are kept 10 s within the relay's equal part of \`relay.retain_read_bytes\`, ${fmtBytes(DEFAULT_RETAIN_READ_BYTES)} for all relays, ${fmtBytes(readShare(servers))} each at ${servers} servers: ` +
    `10 s is ${fmtBytes(eventsPerServer * (r.measuredBodyBytes / r.measuredEvents) * 10)} at this rate), ` +
    `and ${coresPerServer.toFixed(2)} cores at ${eventsPerServer.toLocaleString('en-US')} events/s (${f.cpuPer1000.toFixed(1)} ms per 1,000 events; ${unitCpu.toFixed(1)} ms at 1 server: ` +
    `${fmtRatio(f.cpuPer1000 / unitCpu)} the per-event cost at ${servers}× the servers). The ${servers}-server fleet: ${fmtBytes(f.peakRss)} peak RSS ` +
    `(tables ${fmtBytes(2 * r.blocks * f.perEntry)}, event buffers ${fmtBytes(r.retainedRelayBytes)}, the rest ${fmtBytes(Math.max(0, rest))}: heap headroom, bodies in flight, the process) ` +
    `and ${(servers * coresPerServer).toFixed(1)} cores of event ingest, where one process has one event loop: at ${fmtRatio(f.rate / f.fleetRate)} of the fleet's rate in this run, ` +
    `one sidecar keeps up with about ${Math.max(1, Math.floor((servers * f.rate) / f.fleetRate))} such servers; shard the rest across sidecars (one per subset of servers, the fleet view through Prometheus).`
  );
}

function samples(f: Derived, units: readonly Derived[], p: FleetParams, load0: number[], load1: number[]): string {
  const r = f.r;
  const load = (l: readonly number[]): string => l.map((v) => v.toFixed(2)).join(' ');
  return (
    `${p.servers}-server run: fill of ${r.blocks.toLocaleString('en-US')} blocks per table in ${r.fillSeconds.toFixed(0)} s (${r.fillCpuSeconds.toFixed(0)} s CPU); ` +
    `RSS ${fmtBytes(r.rssBeforeBytes)} before, ${fmtBytes(r.rssAfterFillBytes)} after the fill, ${fmtBytes(r.churnPeakRssBytes)} at most during churn ` +
    `(${r.churnPeakExact ? "the kernel's peak, restarted after the fill" : 'sampled after each round: this kernel would not restart its peak'}; ` +
    `${fmtBytes(r.taskMaxRssBytes)} over the whole run, the fill's batches of event objects and the profiler included); ` +
    `measured ${r.measuredBatches.toLocaleString('en-US')} batches (${r.measuredEvents.toLocaleString('en-US')} events, ${fmtBytes(r.measuredBodyBytes)} of bodies) in ` +
    `${r.sidecarWallSeconds.toFixed(1)} s wall and ${r.sidecarCpuSeconds.toFixed(1)} s CPU of the sidecar (the generator took ${r.generatorCpuSeconds.toFixed(1)} s CPU and the scrapes ${r.scrapeCpuSeconds.toFixed(1)} s, left out); ` +
    `/metrics ${fmtBytes(r.scrapeBytes)}, ${r.scrapeSamples.toLocaleString('en-US')} samples, render ms ${r.scrapeMs.map((v) => v.toFixed(0)).join('/')}; ` +
    `evaluation ms ${r.evaluationMs.map((v) => v.toFixed(0)).join('/')}; verdict ${r.verdictBefore} before the fault (${r.findingsBefore.join(', ') || 'no findings'}: no requests flow in this benchmark, ` +
    `so the verdict stays ${r.verdictAfter}; the latency is the finding's, which is what turns a verdict with traffic to degraded); load average ${load(load0)} at start, ${load(load1)} at end. ` +
    `1-server runs: CPU per 1,000 events ${units.map((d) => d.cpuPer1000.toFixed(1)).join('/')} ms, peak RSS ${units.map((d) => fmtBytes(d.peakRss)).join('/')}, ` +
    `render ${units.map((d) => fmtMs(median(d.r.scrapeMs))).join('/')}.`
  );
}

/** The top entries of a profile without the inspector's `dispatch` (the profiler's own stop call), shares renormalised. */
function top(dir: string, count: number): { text: string; totalMs: number; share: (fn: string) => number } {
  const { entries, totalMs } = topSelfTime(dir, 40);
  const own = entries.find((e) => e.fn === 'dispatch')?.selfMs ?? 0;
  const rest = totalMs - own;
  const kept = entries
    .filter((e) => e.fn !== 'dispatch')
    .slice(0, count)
    .map((e) => ({ ...e, share: rest === 0 ? 0 : e.selfMs / rest }));
  const all = entries.filter((e) => e.fn !== 'dispatch');
  const share = (fn: string): number => (all.find((e) => e.fn.startsWith(fn))?.selfMs ?? 0) / (rest || 1);
  return { text: formatTop(kept), totalMs: rest, share };
}

const pct = (share: number): string => `${(100 * share).toFixed(1)}%`;

function profileNote(dir: string, unitDir: string, unitSeconds: number, servers: number): string {
  const churn = top(`${dir}/churn`, 12);
  const scrape = top(`${dir}/scrape`, 8);
  const unit = top(`${unitDir}/churn`, 10);
  return (
    `**Targets missed — profiles** (V8 CPU profiler in the measured process, after the measurement, the profiler's own \`dispatch\` left out; ` +
    `on this loaded machine its milliseconds include waiting for a core, the shares are what counts): one second of fleet churn, self time of ${churn.totalMs.toFixed(0)} ms: ` +
    `${churn.text}. The same number of events at 1 server × 8 ranks (${unitSeconds} s of its churn, a run of its own), ${unit.totalMs.toFixed(0)} ms: ${unit.text}. ` +
    `Twenty scrapes at fleet size, self time of ${scrape.totalMs.toFixed(0)} ms: ${scrape.text}. ` +
    "(`round`, `encodeUtf8String`, `encode`, `cpuUsage` and `fleet-workload` frames are the benchmark's workers writing bodies, which the figures above leave out.) " +
    `Per event, what moves with the fleet's size is the collector (${pct(churn.share('(garbage collector)'))} of the churn at ${servers} servers, ${pct(unit.share('(garbage collector)'))} at one) ` +
    `and \`splitJsonArrayBytes\` (${pct(churn.share('splitJsonArrayBytes'))} against ${pct(unit.share('splitJsonArrayBytes'))}), which walks every byte of a body outside the compact token runs it passes in one step. ` +
    'Next steps: the drain split and the parse in one walk of the body (the parse reads every byte again, off the poll path), ' +
    'and the ingest of a fleet spread over sidecars (one per subset of servers) until one event loop keeps up with more.'
  );
}

/** The smallest power-of-two slot count holding `n` keys at the hash set's 3/4 load, in bytes per key (9 B/slot). */
function hashSetBytesPerKey(n: number): number {
  return (9 * 2 ** Math.ceil(Math.log2(n / 0.75))) / n;
}

function limits(f: Derived, units: readonly Derived[], p: FleetParams): string {
  const r = f.r;
  const perServer = p.ranks * p.blocksPerRank;
  const unitCpu = median(units.map((d) => d.cpuPer1000));
  const serverBytesPerSecond = (r.measuredBodyBytes / r.measuredEvents) * p.ranks * STEPS_PER_SECOND * 2;
  const cpuRate = r.measuredBatches / r.sidecarCpuSeconds;
  return (
    `What limits it. Memory: the relays' event buffers are ${fmtBytes(r.retainedRelayBytes)} of the ${fmtBytes(f.peakRss)}: a relay keeps the events its ` +
    'router has read for 10 s (for a router replica that joins late) within its equal part of `relay.retain_read_bytes` ' +
    `(${fmtBytes(DEFAULT_RETAIN_READ_BYTES)} for all the process's relays: ${fmtBytes(readShare(p.servers))} each at ${p.servers} servers, and never above \`relay.buffer_max_bytes\`, 64 MiB), and a server of this fleet ` +
    `drains ${fmtBytes(serverBytesPerSecond)} of events per second, ${10 * serverBytesPerSecond >= readShare(p.servers) ? 'so every relay sits at its part' : 'so 10 s of it stays below its part'}; ` +
    'a smaller budget lowers that part in proportion (at the cost of history for late-joining replicas). The tables: worker truth keeps a hash set per rank ' +
    `(${p.blocksPerRank.toLocaleString('en-US')} blocks) and the replica one per server (${perServer.toLocaleString('en-US')}); at the load their power-of-two ` +
    `sizes give (3/4 at most, then they double) the sets alone take ${hashSetBytesPerKey(p.blocksPerRank).toFixed(1)} and ${hashSetBytesPerKey(perServer).toFixed(1)} B per block ` +
    `(9 B per slot); the rest of the ${f.perEntry.toFixed(1)} B is per-server and per-rank state. CPU: ${f.cpuPer1000.toFixed(1)} ms per 1,000 events at ` +
    `${p.servers} servers against ${unitCpu.toFixed(1)} ms at one, with the same bodies per poll; the profiles below compare the two runs (at fleet size the heap also holds the buffers' drain bodies, ` +
    `one ArrayBuffer per drain whose items are views of it, and ${(2 * r.blocks).toLocaleString('en-US')} table entries; the buffers copy out the items they keep of a body they dropped part of, so the byte bound counts what is retained). ` +
    (f.rate < cpuRate
      ? `On this shared machine the wall rate (${fmtRate(f.rate, 'batches/s')}) is below what the CPU alone allows (${fmtRate(cpuRate, 'batches')} per CPU-second): the process waited for a core. `
      : '') +
    `One event loop ingests ${fmtRatio(f.rate / f.fleetRate)} of the fleet's rate (${fmtRatio(cpuRate / f.fleetRate)} per CPU-second).`
  );
}
