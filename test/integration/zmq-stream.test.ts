// The ZMQ KV-event source against real ZMQ sockets: the simulator's publisher in each engine's wire format, the
// source subscribing as one more SUB per rank, the real state behind it. Exact 64-bit hashes (above 2^63, negative
// as int64), per-rank attribution, gaps filled by replay or counted as lost, restarts, garbage, HWM drops, and a
// publisher that never binds.
import { afterEach, describe, expect, it } from 'vitest';
import { truncateKeyToU64, v2Chain } from '../../src/core/hashing/v2-sha256.js';
import type { Observation } from '../../src/core/observe/observation.js';
import { createSentinelState, type SentinelState } from '../../src/core/state/sentinel-state.js';
import type { StreamEngine } from '../../src/core/stream/stream-engine.js';
import type { KvEvent } from '../../src/core/wire/kv-event.js';
import { ZmqKvPublisher, type PublisherFormat } from '../../src/sim/live/zmq-kv-publisher.js';
import { silentLogger } from '../../src/sources/ports.js';
import { SourceStatusBoard } from '../../src/sources/source-status.js';
import { ZmqEventsSource, type ZmqSourceOptions } from '../../src/sources/zmq/zmq-events-source.js';
import { kvEvent, storedBlock } from '../helpers/kv-event-builders.js';
import { eventually } from '../helpers/recording-sink.js';

const BLOCK = 4;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Harness {
  readonly pub: ZmqKvPublisher;
  readonly source: ZmqEventsSource;
  readonly state: SentinelState;
  readonly status: SourceStatusBoard;
  readonly seen: Observation[];
}

async function harness(
  format: PublisherFormat,
  engine: StreamEngine,
  opts: { ranks?: number; replay?: boolean; pubHwm?: number; source?: Partial<ZmqSourceOptions> } = {},
): Promise<Harness> {
  const ranks = opts.ranks ?? 2;
  const pub = new ZmqKvPublisher({
    format,
    ranks,
    blockSize: BLOCK,
    replay: opts.replay ?? true,
    ...(opts.pubHwm !== undefined ? { sendHighWaterMark: opts.pubHwm } : {}),
  });
  await pub.start();
  cleanups.push(() => pub.stop());
  const state = createSentinelState({ mode: 'auto' });
  const seen: Observation[] = [];
  const sink = { apply: (o: Observation) => (seen.push(o), state.apply(o)) };
  const status = new SourceStatusBoard({ sink, clock: Date.now });
  const source = new ZmqEventsSource(
    { id: 'ctx0', endpoint: pub.endpoint, replay: pub.replayEndpoint, engine, ranks, topic: '' },
    { sink, status, clock: Date.now, logger: silentLogger },
    { replayTimeoutMs: 3_000, ...opts.source },
  );
  await source.start();
  cleanups.push(() => source.stop());
  // PUB/SUB joins late: probe with empty batches until every rank delivered one (earlier probes are history)
  for (let rank = 0; rank < ranks; rank++) {
    const deadline = Date.now() + 10_000;
    while (source.counters()[rank]!.batches === 0) {
      if (Date.now() > deadline) throw new Error(`rank ${rank} never delivered`);
      await pub.sendBatch(rank, pub.batch(rank, []));
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  return { pub, source, state, status, seen };
}

/** A chain of `blocks` full blocks whose v2_sha256_64 keys include one ≥ 2^63 (negative as int64). */
function chain(seed: number, blocks: number): { tokens: number[][]; keys: bigint[] } {
  for (let s = seed; ; s++) {
    const tokens = Array.from({ length: blocks }, (_, b) =>
      Array.from({ length: BLOCK }, (_, i) => (s * 7919 + b * 31 + i) % 50_000),
    );
    const keys = v2Chain(tokens.flat(), BLOCK).map(truncateKeyToU64);
    if (keys.some((k) => k >= 2n ** 63n)) return { tokens, keys };
  }
}

function storedEvent(hashes: readonly bigint[], tokens: readonly number[][], parent: bigint | null = null): KvEvent {
  return kvEvent(
    { type: 'stored', parentHash: parent, blocks: hashes.map((h, i) => storedBlock(h, 0, tokens[i])) },
    { hashAlgo: 'v2_sha256_64' },
  );
}

const streamed = (seen: readonly Observation[]): KvEvent[] =>
  seen.flatMap((o) => (o.kind === 'worker-events' ? o.events : []));
const storedKeys = (events: readonly KvEvent[], rank: number | null): bigint[] =>
  events.flatMap((e) =>
    e.data.type === 'stored' && e.attentionDpRank === rank ? e.data.blocks.map((b) => b.blockHash as bigint) : [],
  );
const truth = (h: Harness): number =>
  h.state.diagnosisInput(Date.now()).servers.find((s) => s.server === 'ctx0')?.truthBlocks ?? -1;

describe('ZMQ KV-event source, live sockets', () => {
  it.each<[PublisherFormat, StreamEngine]>([
    ['trtllm', 'trtllm'],
    ['vllm', 'vllm'],
    ['vllm-array', 'vllm'],
    ['sglang', 'sglang'],
  ])('%s format: exact 64-bit hashes per rank, removals find their blocks', async (format, engine) => {
    const h = await harness(format, engine);
    const a = chain(1, 6);
    const b = chain(100, 3);
    // TensorRT-LLM publishes the V2 key itself; vLLM and SGLang hash otherwise: arbitrary u64s, some ≥ 2^63
    const published =
      engine === 'trtllm' ? a.keys : a.keys.map((_, i) => (2n ** 63n + BigInt(i) * 0x1234_5678_9abcn) ^ 0x5555n);
    h.pub.publish(0, storedEvent(published, a.tokens));
    h.pub.publish(1, storedEvent(engine === 'trtllm' ? b.keys : [1n, 2n ** 64n - 2n, 3n], b.tokens));
    await h.pub.flush();
    await eventually(() => truth(h) === 9, 5_000, 'both ranks stored');
    const events = streamed(h.seen);
    // whatever the engine published, the tables hold the V2 chain of the tokens (published as-is for TensorRT-LLM)
    expect(storedKeys(events, 0)).toEqual(a.keys);
    expect(storedKeys(events, 1)).toEqual(b.keys);
    expect(a.keys.some((k) => k >= 2n ** 63n)).toBe(true);
    const server = h.state.snapshot(Date.now()).servers.find((s) => s.server === 'ctx0')!;
    if (engine === 'trtllm') expect(server.hashChecks).toEqual({ match: 9, mismatch: 0, unverifiable: 0 });
    else expect(server.hashChecks).toEqual({ match: 0, mismatch: 0, unverifiable: 9 });
    // removal by the engine's hash (above 2^63): the exact value must find the block
    h.pub.publish(0, kvEvent({ type: 'removed', blockHashes: [published[5]!, published[4]!] }));
    await h.pub.flush();
    await eventually(() => truth(h) === 7, 5_000, 'removal applied');
    expect(server.ranks.map((r) => r.rank)).toEqual([0, 1]);
    expect(h.source.counters().map((c) => c.lostBatches)).toEqual([0, 0]);
    // each rank is its own publisher, so its own health source
    expect(h.status.list().map((x) => [x.source, x.up, x.badInput])).toEqual([
      ['zmq:ctx0/rank0', true, {}],
      ['zmq:ctx0/rank1', true, {}],
    ]);
  });

  it('fills a gap by replay: every batch arrives, in order, and nothing counts as lost', async () => {
    const h = await harness('vllm', 'vllm', { ranks: 1 });
    const a = chain(7, 5);
    const replayedBefore = h.source.counters()[0]!.replayedBatches; // the probes' history, if any
    h.pub.dropNext(3, true); // lost on the way, still in the replay buffer
    for (let i = 0; i < 5; i++) {
      h.pub.publish(0, storedEvent([BigInt(1000 + i)], [a.tokens[i]!], i === 0 ? null : BigInt(999 + i)));
      await h.pub.flush();
    }
    await eventually(() => truth(h) === 5, 5_000, 'all five blocks');
    expect(storedKeys(streamed(h.seen), null)).toEqual(a.keys);
    const c = h.source.counters()[0]!;
    expect(c).toMatchObject({ lostBatches: 0, gaps: 0 });
    expect(c.replayedBatches - replayedBefore).toBe(3);
    expect(h.seen.filter((o) => o.kind === 'stream-sequence' && o.change === 'gap')).toMatchObject([
      { lost: 0, filled: 3 },
    ]);
    const input = h.state.diagnosisInput(Date.now()).servers[0]!;
    expect(input).toMatchObject({ gaps: 0, streamBatchesFilled: 3 });
  });

  it('counts batches the publisher never sent as lost: "stream gaps"', async () => {
    const h = await harness('trtllm', 'trtllm', { ranks: 1 });
    const a = chain(9, 6);
    const before = h.source.counters()[0]!; // the probes' history, if any
    for (let i = 0; i < 6; i++) {
      // three times: a full publisher queue (seq used, nothing sent or buffered), then two published batches
      if (i % 2 === 0) {
        h.pub.dropNext(2, false);
        for (let k = 0; k < 2; k++) await h.pub.sendBatch(0, h.pub.batch(0, []));
      }
      h.pub.publish(0, storedEvent([a.keys[i]!], [a.tokens[i]!], i === 0 ? null : a.keys[i - 1]!));
      await h.pub.flush();
    }
    await eventually(() => h.source.counters()[0]!.lostBatches === 6, 5_000, 'loss counted');
    const input = h.state.diagnosisInput(Date.now()).servers[0]!;
    expect(input).toMatchObject({ gaps: 3, missedEvents: 6, streamed: true });
    const after = h.source.counters()[0]!;
    expect(after.gaps).toBe(3);
    // replay tried each time, with nothing to fill
    expect([after.replayRequests - before.replayRequests, after.replayedBatches - before.replayedBatches]).toEqual([
      3, 0,
    ]);
    const shared = h.state.evaluate(Date.now()).findings.find((f) => f.id === 'event-queue-shared');
    expect(shared?.summary).toMatch(/^stream gaps: 3 seq gaps on the ZMQ KV-event streams of ctx0 lost 6 batches/);
    expect(shared?.fix).toContain('replay');
  });

  it('a publisher restart at the same address resets that rank, and its new life is replayed from 0', async () => {
    const h = await harness('sglang', 'sglang', { ranks: 2 });
    const a = chain(11, 4);
    h.pub.publish(1, storedEvent([10n, 11n, 12n, 13n], a.tokens));
    await h.pub.flush();
    await eventually(() => truth(h) === 4, 5_000, 'first life');
    h.pub.restart();
    h.pub.publish(1, storedEvent([20n], [a.tokens[0]!]));
    await h.pub.flush();
    h.pub.publish(1, storedEvent([21n], [a.tokens[1]!], 20n));
    await h.pub.flush();
    await eventually(
      () => h.seen.some((o) => o.kind === 'stream-sequence' && o.change === 'reset' && o.rank === 1),
      5_000,
      'reset',
    );
    await eventually(() => truth(h) === 2, 5_000, 'table rebuilt from the new life');
    expect(h.state.evaluate(Date.now()).findings.map((f) => f.id)).toContain('event-stream-reset');
    expect(h.source.counters()[1]!.resets).toBe(1);
  });

  it('skips garbage frames and payloads, counts them, and keeps reading', async () => {
    const h = await harness('trtllm', 'trtllm', { ranks: 1, replay: false });
    await h.pub.sendGarbage(0);
    const a = chain(13, 1);
    h.pub.publish(0, storedEvent(a.keys, a.tokens));
    await h.pub.flush();
    await eventually(() => truth(h) === 1, 5_000, 'the good batch after the garbage');
    expect(h.status.list()[0]!.badInput).toEqual({ 'stream-bad-frames': 1, 'stream-not-msgpack': 1 });
    expect(h.source.counters()[0]!.malformed).toBe(2);
    expect(h.source.counters()[0]!.lostBatches).toBe(0); // the garbage batch had its seq: nothing is missing
  });

  it('counts every batch a slow subscriber lost past the high-water marks', async () => {
    const h = await harness('vllm', 'vllm', {
      ranks: 1,
      replay: false,
      pubHwm: 8,
      source: { receiveHighWaterMark: 8 },
    });
    const before = h.source.counters()[0]!.batches;
    const total = 3_000;
    // a tight loop: the subscriber's socket is not read while it runs
    const batch = h.pub.batch(0, [{ type: 'AllBlocksCleared' }]);
    for (let i = 0; i < total; i++) await h.pub.sendBatch(0, batch);
    await new Promise((r) => setTimeout(r, 200));
    await h.pub.sendBatch(0, batch); // reveals a gap at the very end
    await eventually(
      () => {
        const c = h.source.counters()[0]!;
        return c.batches + c.lostBatches - before === total + 1;
      },
      10_000,
      'every seq accounted',
    );
    const c = h.source.counters()[0]!;
    expect(c.lostBatches).toBeGreaterThan(0);
    // a gap that showed while the socket's queue was backlogged reaches the state once the queue says whose loss it
    // was (the source looks at least once a second)
    await eventually(
      () => h.state.diagnosisInput(Date.now()).servers[0]!.missedEvents === c.lostBatches,
      5_000,
      'the state to count every lost batch',
    );
  });

  it('reports a publisher that never binds as down (source-unreachable)', async () => {
    const state = createSentinelState({ mode: 'auto' });
    const status = new SourceStatusBoard({ sink: state, clock: Date.now });
    // a port nothing listens on: bind and close a publisher to find one
    const probe = new ZmqKvPublisher({ format: 'vllm', ranks: 1, blockSize: BLOCK });
    await probe.start();
    const endpoint = probe.endpoint;
    await probe.stop();
    const source = new ZmqEventsSource(
      { id: 'ctx9', endpoint, replay: null, engine: 'vllm', ranks: 1, topic: '' },
      { sink: state, status, clock: Date.now, logger: silentLogger },
    );
    await source.start();
    cleanups.push(() => source.stop());
    await eventually(() => (status.list()[0]?.errors.connect ?? 0) >= 3, 10_000, 'connect retries');
    expect(status.list()[0]).toMatchObject({ source: 'zmq:ctx9', up: false });
    expect(state.evaluate(Date.now()).findings.map((f) => f.id)).toContain('source-unreachable');
  });

  it('a rank whose publisher never binds is unreachable on its own while rank 0 delivers (attention DP, rank 0 only)', async () => {
    const pub = new ZmqKvPublisher({ format: 'sglang', ranks: 1, blockSize: BLOCK });
    await pub.start();
    cleanups.push(() => pub.stop());
    const state = createSentinelState({ mode: 'auto' });
    const status = new SourceStatusBoard({ sink: state, clock: Date.now });
    // two ranks configured, one publisher bound: rank 1's port (base + 1) has none
    const source = new ZmqEventsSource(
      { id: 'ctx0', endpoint: pub.endpoint, replay: null, engine: 'sglang', ranks: 2, topic: '' },
      { sink: state, status, clock: Date.now, logger: silentLogger },
    );
    await source.start();
    cleanups.push(() => source.stop());
    const a = chain(17, 1);
    const timer = setInterval(() => {
      pub.publish(0, storedEvent([5n], a.tokens));
    }, 20);
    try {
      await eventually(
        () =>
          (status.list().find((x) => x.source === 'zmq:ctx0/rank1')?.errors.connect ?? 0) >= 3 &&
          source.counters()[0]!.batches > 0,
        10_000,
        'rank 1 retries, rank 0 delivers',
      );
    } finally {
      clearInterval(timer);
    }
    // the board lists sources as they first report: under load rank 1's first refused connect can come first
    expect(
      status
        .list()
        .map((x) => [x.source, x.up])
        .sort(),
    ).toEqual([
      ['zmq:ctx0/rank0', true],
      ['zmq:ctx0/rank1', false],
    ]);
    const unreachable = state.evaluate(Date.now()).findings.find((f) => f.id === 'source-unreachable');
    expect(unreachable?.summary).toMatch(/zmq:ctx0\/rank1: .*rank 1 .*nothing accepts connections/);
  });
});
