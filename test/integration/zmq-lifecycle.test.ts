// The ZMQ subscriber's lifecycle against an independent vLLM publisher (test/publishers/lifecycle_publisher.py,
// written from vLLM's kv_events.py): snapshot mode's publisher id in both wire builds and its heartbeat, and
// restarts — including a new life whose seq passed the old one before this subscriber reconnected — and a
// subscriber that joins after more batches than the publisher buffers for replay.
import { afterEach, describe, expect, it } from 'vitest';
import type { Observation } from '../../src/core/observe/observation.js';
import { createSentinelState, type SentinelState } from '../../src/core/state/sentinel-state.js';
import type { Logger } from '../../src/sources/ports.js';
import { SourceStatusBoard } from '../../src/sources/source-status.js';
import { ZmqEventsSource, type ZmqSourceOptions } from '../../src/sources/zmq/zmq-events-source.js';
import { blockHash, LifecyclePublisher, type LifecyclePublisherOptions } from '../helpers/lifecycle-publisher.js';
import { eventually } from '../helpers/recording-sink.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Harness {
  readonly source: ZmqEventsSource;
  readonly state: SentinelState;
  readonly status: SourceStatusBoard;
  readonly seen: Observation[];
  readonly warnings: string[];
}

async function publisher(o: LifecyclePublisherOptions): Promise<LifecyclePublisher> {
  const p = await LifecyclePublisher.start(o);
  cleanups.push(() => p.stop());
  return p;
}

async function subscribe(pub: LifecyclePublisher, source: Partial<ZmqSourceOptions> = {}): Promise<Harness> {
  const state = createSentinelState({ mode: 'auto' });
  const seen: Observation[] = [];
  const warnings: string[] = [];
  const logger: Logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: (m) => void warnings.push(m),
    error: (m) => void warnings.push(m),
  };
  const sink = { apply: (o: Observation) => (seen.push(o), state.apply(o)) };
  const status = new SourceStatusBoard({ sink, clock: Date.now });
  const s = new ZmqEventsSource(
    { id: 'ctx0', endpoint: pub.endpoint, replay: pub.ready.replay, engine: 'vllm', ranks: 1, topic: '' },
    { sink, status, clock: Date.now, logger },
    { replayTimeoutMs: 3_000, ...source },
  );
  await s.start();
  cleanups.push(() => s.stop());
  // PUB/SUB joins late: probe with empty batches until one was delivered (earlier ones are history)
  const deadline = Date.now() + 10_000;
  while (s.counters()[0]!.batches === 0) {
    if (Date.now() > deadline) throw new Error('the publisher never delivered');
    await pub.send({ op: 'empty' });
    await new Promise((r) => setTimeout(r, 20));
  }
  return { source: s, state, status, seen, warnings };
}

const truth = (h: Harness): number =>
  h.state.diagnosisInput(Date.now()).servers.find((s) => s.server === 'ctx0')?.truthBlocks ?? -1;
const resets = (h: Harness): number => h.source.counters()[0]!.resets;
const status = (h: Harness) => h.status.list().find((s) => s.source === 'zmq:ctx0')!;
const badInput = (h: Harness, code: string): number => status(h).badInput[code] ?? 0;

/** Stores `n` chained blocks, one batch each; tokens distinct per seed. */
async function storeChain(pub: LifecyclePublisher, seed: number, n: number): Promise<void> {
  let parent: string | null = null;
  for (let i = 0; i < n; i++) {
    const hash = blockHash(seed, i);
    await pub.store(
      [hash],
      parent,
      [0, 1, 2, 3].map((j) => (seed * 1000 + i * 4 + j) % 50_000),
    );
    parent = hash;
  }
}

describe('vLLM snapshot mode (snapshot_endpoint set)', () => {
  it.each(['frame', 'batch'] as const)(
    '%s build: batches with a publisher id are read, and the id is the life',
    async (snapshot) => {
      const pub = await publisher({ endpoint: 'tcp://*:0', snapshot });
      const h = await subscribe(pub);
      await storeChain(pub, 1, 3);
      await eventually(() => truth(h) === 3, 5_000, 'three blocks stored');
      expect(h.source.publisherIds()).toEqual([pub.ready.publisher_id]);
      expect(h.source.counters()[0]!.malformed).toBe(0);
      expect(badInput(h, 'stream-bad-seq')).toBe(0);
    },
  );

  it('the heartbeat advances the seq while idle and shows a lost final batch', async () => {
    const pub = await publisher({ endpoint: 'tcp://*:0', snapshot: 'batch' });
    const h = await subscribe(pub);
    await storeChain(pub, 2, 2);
    await eventually(() => truth(h) === 2, 5_000, 'two blocks stored');
    const before = h.source.counters()[0]!.batches;
    // idle: vLLM sends an empty batch after each idle second, delivered as a seq update
    await eventually(() => h.source.counters()[0]!.batches > before, 5_000, 'a heartbeat');
    // the last batch before going idle is lost: only the next heartbeat's seq shows it
    await pub.send({ op: 'lose', n: 1 });
    await eventually(() => h.source.counters()[0]!.lostBatches === 1, 5_000, 'the lost tail batch counted');
    expect(h.source.counters()[0]!.gaps).toBe(1);
  });

  it('a publisher that stops heartbeating is reported down, and up again when it resumes', async () => {
    const pub = await publisher({ endpoint: 'tcp://*:0', snapshot: 'batch' });
    const h = await subscribe(pub, { heartbeatTimeoutMs: 2_500 });
    pub.pause(true);
    await eventually(() => !status(h).up, 10_000, 'down');
    expect(status(h).lastError).toContain('heartbeat');
    pub.pause(false);
    await eventually(() => status(h).up, 10_000, 'up again');
  });
});

describe('publisher restarts at the same address', () => {
  async function restartScenario(opts: { replay: boolean; snapshot: 'none' | 'batch' }): Promise<Harness> {
    const first = await publisher({
      endpoint: 'tcp://*:0',
      ...(opts.replay ? { replayEndpoint: 'tcp://*:0' } : {}),
      snapshot: opts.snapshot,
    });
    const h = await subscribe(first);
    await storeChain(first, 10, 4);
    await eventually(() => truth(h) === 4, 5_000, 'the first life stored 4 blocks');
    const port = first.endpoint.slice(first.endpoint.lastIndexOf(':') + 1);
    const replayPort = first.ready.replay?.slice(first.ready.replay.lastIndexOf(':') + 1);
    await first.stop();
    await eventually(() => h.source.connectedRanks === 0, 5_000, 'the subscriber saw the disconnect');
    // the new life publishes 40 batches at once, past the old life's last seq, before the subscriber reconnects
    const second = await publisher({
      endpoint: `tcp://*:${port}`,
      ...(replayPort !== undefined ? { replayEndpoint: `tcp://*:${replayPort}` } : {}),
      snapshot: opts.snapshot,
      prelude: 40,
      preludeSeed: 20,
    });
    await eventually(() => h.source.connectedRanks === 1, 10_000, 'reconnected');
    await storeChain(second, 30, 2);
    return h;
  }

  it('with a replay endpoint: the old buffer is gone, so the jump is a new life, replayed from its start', async () => {
    const h = await restartScenario({ replay: true, snapshot: 'none' });
    // the old life's 4 blocks are gone; the new one's 40 (replayed) and 2 (live) are the table
    await eventually(() => truth(h) === 42, 10_000, 'the new life is the table');
    expect(resets(h)).toBe(1);
    expect(h.warnings.some((w) => w.includes('no longer holds the last batch seen'))).toBe(true);
    expect(h.source.counters()[0]!.lostBatches).toBe(0);
  });

  it('without replay: a jump after a reconnection is presumed a new life, its unseen start lost', async () => {
    const h = await restartScenario({ replay: false, snapshot: 'none' });
    await eventually(() => truth(h) === 2, 10_000, 'only what the new life sent since');
    expect(resets(h)).toBe(1);
    expect(h.warnings.some((w) => w.includes('nothing shows the old life went on'))).toBe(true);
    expect(h.source.counters()[0]!.lostBatches).toBeGreaterThanOrEqual(40);
  });

  it('in snapshot mode the publisher id says it: a new life even when its seq passed the old one', async () => {
    const h = await restartScenario({ replay: false, snapshot: 'batch' });
    await eventually(() => truth(h) === 2, 10_000, 'only the new life');
    expect(resets(h)).toBe(1);
    expect(h.warnings.some((w) => w.includes("the publisher's id changed"))).toBe(true);
  });
});

describe('joining after more than the replay buffer holds', () => {
  const finding = (h: Harness) => h.state.evaluate(Date.now()).findings.find((f) => f.id === 'evidence-insufficient');
  const gaps = (h: Harness) =>
    h.state.diagnosisInput(Date.now()).servers.find((s) => s.server === 'ctx0')?.historyIncomplete ?? [];

  it('reports per rank since when history is incomplete, qualifies the verdict, and clears it on turnover', async () => {
    // 30 batches before kvsentinel starts (a chain, then root blocks); the replay buffer keeps the last 10
    const pub = await publisher({ endpoint: 'tcp://*:0', replayEndpoint: 'tcp://*:0', bufferSteps: 10 });
    await storeChain(pub, 40, 20);
    for (let i = 0; i < 10; i++) await pub.store([blockHash(41, i)], null, [7, 7, 7, i]);
    const joined = Date.now();
    const h = await subscribe(pub);
    await eventually(() => gaps(h).length === 1, 5_000, 'the history gap reported');
    const missing = gaps(h)[0]!.missingBatches;
    // 30 stored and the probes the subscription missed, less the 10 the buffer replayed
    expect(gaps(h)[0]!.rank).toBe(0);
    expect(missing).toBeGreaterThanOrEqual(20);
    expect(gaps(h)[0]!.since).toBeGreaterThanOrEqual(joined);
    expect(h.source.counters()[0]!.replayedBatches).toBe(10);
    // not a loss: kvsentinel was not listening
    expect(h.source.counters()[0]!.lostBatches).toBe(0);
    expect(h.seen.filter((o) => o.kind === 'stream-sequence' && o.change === 'gap' && o.lost > 0)).toEqual([]);
    const f = finding(h);
    expect(f?.summary).toContain('ctx0 rank 0: KV history incomplete since');
    expect(f?.evidence['history_incomplete_since']).toMatch(/^ctx0\/rank0:/);
    expect(h.state.evaluate(Date.now()).verdict).not.toBe('healthy');
    expect(h.state.snapshot(Date.now()).servers.find((s) => s.server === 'ctx0')?.historyIncomplete).toHaveLength(1);
    // the replayed roots are the known table; the operator states a capacity of as many blocks
    const known = Array.from({ length: 30 - missing }, (_, k) => blockHash(41, missing - 20 + k));
    await eventually(() => truth(h) === known.length, 5_000, 'the replayed roots held');
    h.state.apply({
      kind: 'server-info',
      ts: Date.now(),
      server: 'ctx0',
      hashAlgo: null,
      tokensPerBlock: null,
      kvCapacityBlocks: known.length,
    });
    // once the rank removed as many blocks as it holds, its pool has cycled: the table has turned over
    await pub.remove(known.slice(1));
    await eventually(() => truth(h) === 1, 5_000, 'the removals delivered');
    expect(gaps(h)).toHaveLength(1);
    await pub.remove(known.slice(0, 1));
    await eventually(() => gaps(h).length === 0, 5_000, 'turned over');
    expect(finding(h)?.summary ?? '').not.toContain('history incomplete');
  });

  it('without a replay endpoint the first seq heard is the history missed; a cache clear completes it', async () => {
    const pub = await publisher({ endpoint: 'tcp://*:0' });
    await storeChain(pub, 50, 5);
    const h = await subscribe(pub);
    await eventually(() => gaps(h).length === 1, 5_000, 'the history gap reported');
    expect(gaps(h)[0]!.missingBatches).toBeGreaterThanOrEqual(5);
    await pub.send({ op: 'clear' });
    await eventually(() => gaps(h).length === 0, 5_000, 'a cleared cache leaves nothing unknown');
  });

  it('a subscriber whose replay brought the whole life reports nothing missing', async () => {
    const pub = await publisher({ endpoint: 'tcp://*:0', replayEndpoint: 'tcp://*:0', bufferSteps: 100 });
    await storeChain(pub, 60, 5);
    const h = await subscribe(pub);
    await eventually(() => truth(h) === 5, 5_000, 'the history replayed');
    expect(gaps(h)).toEqual([]);
    expect(finding(h)?.summary ?? '').not.toContain('history incomplete');
  });
});
