// Child task: the sidecar's state at fleet size, fed the way `kvsentinel serve` feeds it in relay mode. One relay
// event path per server (the daemon's RelayEventPath: drain, split into items, event buffer, parse off the poll's
// path, observations), a router that polls every relay, the daemon's state (its `serve` preset: 10-minute window,
// evaluations at most every second, hysteresis 2/5) and its Prometheus exporter. No sockets: a drain returns the
// body bytes a worker would send, the router's answer is counted and dropped.
//
// Phases: fill every rank to its resident size (the fleet's first steps: 4-block stored events, objects handed to
// the state without the JSON parse, which would take hours at this size), then steady churn from wire bytes (each
// step a stored batch and the removal of the oldest), with an evaluation every second of fleet time and a scrape
// after it, then a fault: another consumer drains one server's queue once, and the evaluations run until the
// finding it causes is on. The clock is the fleet's: each round is `pollMs` of the fleet's traffic, so counters,
// windows and the relays' retention (read events kept 10 s) see what a sidecar that keeps up would see; wall and CPU
// time of every phase are measured beside it.
import { Session } from 'node:inspector';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { createSentinelState, type SentinelStateSnapshot } from '../../src/core/state/sentinel-state.js';
import { STATE_PRESETS } from '../../src/app/state-presets.js';
import type { KvEvent } from '../../src/core/wire/kv-event.js';
import { ReadRetentionPool } from '../../src/core/relay/read-retention.js';
import { parseKvEvents } from '../../src/core/wire/parse-kv-events.js';
import { createExporter } from '../../src/outputs/exporter.js';
import { silentLogger } from '../../src/sources/ports.js';
import { RelayEventPath, type ParsedEventsLike } from '../../src/sources/relay/relay-event-path.js';
import { SourceStatusBoard } from '../../src/sources/source-status.js';
import { checkItemsMatchSerializer, FleetWorkload, type FleetShape } from '../lib/fleet-workload.js';
import { gc, retained } from '../lib/heap.js';
import { peakRssBytes, resetPeakRss } from '../lib/proc-cpu.js';

export interface FleetParams extends FleetShape {
  /** fleet steps per rank per second */
  readonly stepsPerSecond: number;
  /** fleet time per round: each relay is polled once per round */
  readonly pollMs: number;
  /** churn before the measured window (the relays' retention reaches its steady size), fleet seconds */
  readonly warmupSeconds: number;
  readonly measureSeconds: number;
  /** after the measurement: CPU profiles of a second of churn (`churn/`) and of 20 scrapes (`scrape/`) */
  readonly profileDir?: string;
  /** fleet seconds of churn under the profiler (default 1) */
  readonly profileSeconds?: number;
}

export interface FleetResult {
  readonly blocks: number;
  readonly truthBlocks: number;
  readonly replicaBlocks: number;
  readonly fillSeconds: number;
  readonly fillCpuSeconds: number;
  /** heapUsed + arrayBuffers growth over the fill after full GCs, per table entry (truth + replica) */
  readonly retainedBytesPerEntry: number;
  readonly rssFillBytesPerEntry: number;
  readonly rssBeforeBytes: number;
  readonly rssAfterFillBytes: number;
  /**
   * the peak RSS of the churn, from the end of the fill to the end of the measured churn: the kernel's high-water
   * mark, restarted after the fill (`churnPeakExact`), else the largest RSS sampled after a round
   */
  readonly churnPeakRssBytes: number;
  readonly churnPeakExact: boolean;
  readonly retainedRelayBytes: number;
  readonly measuredBatches: number;
  readonly measuredEvents: number;
  readonly measuredBodyBytes: number;
  /** the sidecar's part of the measured churn (generation excluded): wall and CPU of the process */
  readonly sidecarWallSeconds: number;
  readonly sidecarCpuSeconds: number;
  readonly generatorCpuSeconds: number;
  /** the scrapes' CPU in the measured window (not in sidecarCpuSeconds) */
  readonly scrapeCpuSeconds: number;
  readonly evaluationMs: number[];
  readonly scrapeMs: number[];
  readonly scrapeBytes: number;
  readonly scrapeSamples: number;
  readonly verdictBefore: string;
  readonly findingsBefore: string[];
  /** fleet ms and wall ms from the other consumer's drain to the first evaluation with the finding on */
  readonly faultFleetMs: number | null;
  readonly faultWallMs: number | null;
  readonly verdictAfter: string;
  readonly faultFinding: string;
  readonly hashMismatches: number;
  readonly gapsBeforeFault: number;
}

const FAULT_FINDING = 'event-queue-shared';
const SCRAPES_PER_EVALUATION = 3;
const PROFILED_SCRAPES = 20;

function cpuSeconds(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export async function runFleet(params: FleetParams): Promise<FleetResult> {
  checkItemsMatchSerializer(params);
  const workload = new FleetWorkload(params);
  const { servers, ranks } = params;
  const stepsPerRound = (params.stepsPerSecond * params.pollMs) / 1000;
  if (!Number.isInteger(stepsPerRound) || stepsPerRound < 1) throw new Error('pollMs × stepsPerSecond: whole steps');
  let now = 1_800_000_000_000;
  const clock = (): number => now;
  gc();
  const rssBefore = process.memoryUsage().rss;
  const retainedBefore = retained();

  const state = createSentinelState({
    ...STATE_PRESETS.daemon,
    mode: 'auto',
    limits: { tableBlocksPerServer: Math.max(4_000_000, ranks * params.blocksPerRank) },
  });
  const status = new SourceStatusBoard({ sink: state, clock, logger: silentLogger });
  const exporter = createExporter({
    registry: new Registry(),
    sources: () => status.list(),
    snapshot: () => state.snapshot(clock()),
    reload: () => ({ successful: true, lastSuccessAt: 0 }),
    build: { version: 'bench', revision: 'bench', nodejsVersion: process.version },
    logger: silentLogger,
  });

  // the worker queues: a body per server per round, or events handed over as objects during the fill
  const queued: (Uint8Array | null)[] = Array.from({ length: servers }, () => null);
  const prebuilt = new Map<Uint8Array, ParsedEventsLike>();
  const parseEvents = (body: Uint8Array | string): ParsedEventsLike => {
    const objects = typeof body === 'string' ? undefined : prebuilt.get(body);
    if (objects !== undefined) {
      prebuilt.delete(body as Uint8Array);
      return objects;
    }
    return parseKvEvents(body);
  };
  // the read history every relay keeps is one budget, the daemon's default, shared as `serve` shares it
  const readRetention = new ReadRetentionPool();
  const paths = Array.from({ length: servers }, (_, s) => {
    const server = workload.server(s);
    status.register(`relay:${server}`);
    return new RelayEventPath(
      {
        server,
        source: `relay:${server}`,
        upstream: `bench://${server}`,
        drain: () => {
          const body = queued[s] ?? new Uint8Array([0x5b, 0x5d]);
          queued[s] = null;
          return Promise.resolve(body);
        },
        sink: state,
        status,
        clock,
        logger: silentLogger,
        parseEvents,
      },
      {},
      readRetention.join(),
    );
  });
  let routerBytes = 0;
  const pollAll = async (): Promise<void> => {
    await Promise.all(
      paths.map((p) =>
        p.poll(
          () => 'router',
          () => false,
          (b) => (routerBytes += b.length),
        ),
      ),
    );
    // the parse runs on the turn after the drain, as in the relay
    await nextTurn();
  };

  // fill: the fleet's first steps, as objects (placeholder items keep the relays' sequence numbers exact)
  const fillCpu0 = cpuSeconds();
  const fillWall0 = performance.now();
  const fillSteps = 500;
  for (let s = 0; s < servers; s++) {
    const events: KvEvent[] = [];
    for (let r = 0; r < ranks; r++) events.push(workload.created(s, r));
    hand(s, events);
  }
  await pollAll();
  while (workload.storedBatches() < servers * ranks * workload.residentBatches) {
    for (let s = 0; s < servers; s++) {
      const events: KvEvent[] = [];
      for (let k = 0; k < fillSteps; k++)
        for (let r = 0; r < ranks; r++)
          if (workload.batchesOf(s, r) < workload.residentBatches) workload.stepEvents(s, r, events);
      hand(s, events);
    }
    now += (fillSteps * 1000) / params.stepsPerSecond;
    await pollAll();
  }
  function hand(s: number, events: KvEvent[]): void {
    const body = new TextEncoder().encode(`[${new Array<string>(events.length).fill('0').join(',')}]`);
    prebuilt.set(body, { events: events.map((event, index) => ({ event, index })), issues: [] });
    queued[s] = body;
  }
  const fillSeconds = (performance.now() - fillWall0) / 1000;
  const fillCpuSeconds = cpuSeconds() - fillCpu0;
  const filled = state.evaluate(clock());
  const truthBlocks = sum(filled, (s) => s.ranks.reduce((n, r) => n + (r.blocksByLevel[0] ?? 0), 0));
  const replicaBlocks = sum(filled, (s) => s.routerTableBlocks);
  const blocks = servers * ranks * params.blocksPerRank;
  if (truthBlocks !== blocks || replicaBlocks !== blocks)
    throw new Error(`fill: worker truth ${truthBlocks}, replica ${replicaBlocks} blocks, wanted ${blocks} each`);
  gc();
  const rssAfterFill = process.memoryUsage().rss;
  const retainedAfterFill = retained();
  // the fill hands the state 500 steps of event objects at a time, which no sidecar sees: the churn's peak is its own
  const churnPeakExact = resetPeakRss();

  // churn
  let churnPeakRss = 0;
  let genCpu = 0;
  let genWall = 0;
  const round = (steal: number | null): Promise<void> => {
    const c0 = cpuSeconds();
    const w0 = performance.now();
    for (let s = 0; s < servers; s++) {
      const items: string[] = [];
      for (let k = 0; k < stepsPerRound; k++) for (let r = 0; r < ranks; r++) workload.stepItems(s, r, items);
      // another consumer drained this server's queue: the relay never sees these events
      if (s !== steal) queued[s] = new TextEncoder().encode(`[${items.join(',')}]`);
    }
    genCpu += cpuSeconds() - c0;
    genWall += performance.now() - w0;
    now += params.pollMs;
    return pollAll();
  };
  const evaluationMs: number[] = [];
  const scrapeMs: number[] = [];
  let scrapeBytes = 0;
  let scrapeSamples = 0;
  let lastEval = now;
  let scrapeCpu = 0;
  /** an evaluation per second of fleet time (the daemon's timeline sampler), a scrape after it */
  const maybeEvaluate = async (measure: boolean): Promise<SentinelStateSnapshot | null> => {
    if (now - lastEval < 1000) return null;
    lastEval = now;
    const t0 = performance.now();
    const snap = state.evaluate(clock());
    if (measure) evaluationMs.push(performance.now() - t0);
    // scrapes between evaluations (snapshots only read: projection and exposition); their CPU is kept apart,
    // since it follows the scrape interval, not the events
    const c0 = cpuSeconds();
    for (let i = 0; i < (measure ? SCRAPES_PER_EVALUATION : 1); i++) {
      const t1 = performance.now();
      const text = await exporter.metrics();
      if (!measure) continue;
      scrapeMs.push(performance.now() - t1);
      scrapeBytes = text.length;
      scrapeSamples = text.split('\n').filter((l) => l.length > 0 && !l.startsWith('#')).length;
    }
    scrapeCpu += cpuSeconds() - c0;
    return snap;
  };
  const roundsOf = (seconds: number): number => Math.round((seconds * 1000) / params.pollMs);
  for (let i = 0; i < roundsOf(params.warmupSeconds); i++) {
    await round(null);
    await maybeEvaluate(false);
    churnPeakRss = Math.max(churnPeakRss, process.memoryUsage().rss);
  }
  const batches0 = workload.storedBatches();
  const bytes0 = routerBytes;
  genCpu = 0;
  genWall = 0;
  scrapeCpu = 0;
  const cpu0 = cpuSeconds();
  const wall0 = performance.now();
  for (let i = 0; i < roundsOf(params.measureSeconds); i++) {
    await round(null);
    await maybeEvaluate(true);
    churnPeakRss = Math.max(churnPeakRss, process.memoryUsage().rss);
  }
  if (churnPeakExact) churnPeakRss = Math.max(churnPeakRss, peakRssBytes(process.pid) ?? 0);
  const sidecarWallSeconds = (performance.now() - wall0 - genWall) / 1000;
  const sidecarCpuSeconds = cpuSeconds() - cpu0 - genCpu - scrapeCpu;
  const scrapeCpuSeconds = scrapeCpu;
  const generatorCpuSeconds = genCpu;
  const measuredBatches = workload.storedBatches() - batches0;
  const measuredBodyBytes = routerBytes - bytes0;
  // the fault: another consumer drains ctx0's queue once; evaluations go on until the finding is on
  lastEval = now - 1000;
  const before = (await maybeEvaluate(false))!;
  const gapsBeforeFault = sum(before, (s) => s.ranks.reduce((n, r) => n + r.gaps, 0));
  const faultAt = now;
  const faultWall = performance.now();
  await round(0);
  let faultFleetMs: number | null = null;
  let faultWallMs: number | null = null;
  let after: SentinelStateSnapshot = before;
  while (now - faultAt < 30_000) {
    const snap = await maybeEvaluate(false);
    if (snap !== null) {
      after = snap;
      if (snap.findings.some((f) => f.id === FAULT_FINDING)) {
        faultFleetMs = now - faultAt;
        faultWallMs = performance.now() - faultWall;
        break;
      }
    }
    await round(null);
  }
  const retainedRelayBytes = paths.reduce((n, p) => n + p.bufferStats().retainedBytes, 0);
  // profiles after the measurement, so they cost it nothing: a second of churn, then scrapes alone
  if (params.profileDir !== undefined) {
    await profiled(join(params.profileDir, 'churn'), async () => {
      for (let i = 0; i < roundsOf(params.profileSeconds ?? 1); i++) {
        await round(null);
        await maybeEvaluate(false);
      }
    });
    await profiled(join(params.profileDir, 'scrape'), async () => {
      for (let i = 0; i < PROFILED_SCRAPES; i++) await exporter.metrics();
    });
  }
  return {
    blocks,
    truthBlocks,
    replicaBlocks,
    fillSeconds,
    fillCpuSeconds,
    retainedBytesPerEntry: (retainedAfterFill - retainedBefore) / (2 * blocks),
    rssFillBytesPerEntry: (rssAfterFill - rssBefore) / (2 * blocks),
    rssBeforeBytes: rssBefore,
    rssAfterFillBytes: rssAfterFill,
    churnPeakRssBytes: churnPeakRss,
    churnPeakExact,
    retainedRelayBytes,
    measuredBatches,
    measuredEvents: 2 * measuredBatches,
    measuredBodyBytes,
    sidecarWallSeconds,
    sidecarCpuSeconds,
    generatorCpuSeconds,
    scrapeCpuSeconds,
    evaluationMs,
    scrapeMs,
    scrapeBytes,
    scrapeSamples,
    verdictBefore: before.verdict,
    findingsBefore: before.findings.map((f) => f.id),
    faultFleetMs,
    faultWallMs,
    verdictAfter: after.verdict,
    faultFinding: FAULT_FINDING,
    hashMismatches: sum(after, (s) => s.hashChecks.mismatch),
    gapsBeforeFault,
  };
}

function sum(snap: SentinelStateSnapshot, of: (s: SentinelStateSnapshot['servers'][number]) => number): number {
  return snap.servers.reduce((n, s) => n + of(s), 0);
}

/** Runs `work` under the V8 CPU profiler and writes the profile into `dir` (bench/lib/profile.ts reads it). */
async function profiled(dir: string, work: () => Promise<void>): Promise<void> {
  const session = new Session();
  session.connect();
  await post(session, 'Profiler.enable');
  await post(session, 'Profiler.start');
  await work();
  const { profile } = (await post(session, 'Profiler.stop')) as { profile: unknown };
  session.disconnect();
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'CPU.fleet.0.0.cpuprofile'), JSON.stringify(profile));
}

function post(session: Session, method: string): Promise<unknown> {
  return new Promise((resolve, reject) =>
    session.post(method, (err, result) => (err === null ? resolve(result) : reject(err))),
  );
}
