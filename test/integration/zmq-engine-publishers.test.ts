// kvsentinel's ZMQ source against an independent publisher written from vLLM's and SGLang's source
// (test/publishers/engine_publisher.py: real pyzmq sockets, real msgpack, vLLM's default sha256-of-pickle hashes),
// over real sockets. For each situation of issue #23 the table must equal the engine's own truth, which the
// publisher keeps the way vLLM's subscriber contract counts it: residency per (medium, hash) with duplicates.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { truncateKeyToU64, v2Chain } from '../../src/core/hashing/v2-sha256.js';
import type { Observation } from '../../src/core/observe/observation.js';
import { WorkerTruthTable } from '../../src/core/tables/worker-truth-table.js';
import { silentLogger } from '../../src/sources/ports.js';
import { SourceStatusBoard } from '../../src/sources/source-status.js';
import { ZmqEventsSource } from '../../src/sources/zmq/zmq-events-source.js';
import { eventually } from '../helpers/recording-sink.js';

const BS = 4;
const PUBLISHER = new URL('../publishers/engine_publisher.py', import.meta.url).pathname;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Truth {
  readonly blocks: number;
  readonly per_medium: Record<string, number>;
  readonly copies: number;
}

/** The Python publisher: one JSON command per line, one JSON answer per line. */
class EnginePublisher {
  readonly #proc: ChildProcessWithoutNullStreams;
  readonly #lines: AsyncIterator<string>;

  constructor(options: Record<string, unknown>) {
    this.#proc = spawn('/usr/bin/python3', [PUBLISHER, JSON.stringify(options)]);
    this.#lines = createInterface({ input: this.#proc.stdout })[Symbol.asyncIterator]();
    cleanups.push(() => {
      this.#proc.kill();
    });
  }

  async next(): Promise<Record<string, unknown>> {
    const line = await this.#lines.next();
    if (line.done === true) throw new Error('the publisher exited');
    return JSON.parse(line.value) as Record<string, unknown>;
  }

  async send(cmd: Record<string, unknown>): Promise<Record<string, unknown>> {
    this.#proc.stdin.write(`${JSON.stringify(cmd)}\n`);
    return this.next();
  }

  async store(blocks: number[][], o: Record<string, unknown> = {}): Promise<string[]> {
    return (await this.send({ op: 'store', blocks, ...o })).refs as string[];
  }

  truth(): Promise<Truth> {
    return this.send({ op: 'truth' }) as unknown as Promise<Truth>;
  }
}

interface Rig {
  readonly pub: EnginePublisher;
  /** worker truth fed as the state's reducer feeds it (worker-events-reducer.ts) */
  readonly truth: WorkerTruthTable;
  readonly source: ZmqEventsSource;
}

async function rig(engine: 'vllm' | 'sglang', o: Record<string, unknown> = {}, hitLevel?: number): Promise<Rig> {
  const pub = new EnginePublisher({ engine, block_size: BS, seed: '0', ...o });
  const where = (await pub.next()) as { endpoint: string; replay: string };
  // what the test wants published before kvsentinel listens (joining late)
  const before = (o.before as ((p: EnginePublisher) => Promise<void>) | undefined) ?? null;
  if (before !== null) await before(pub);
  const truth = new WorkerTruthTable();
  const sink = {
    apply: (obs: Observation): void => {
      if (obs.kind === 'worker-events') for (const e of obs.events) truth.apply(obs.server, e);
      if (obs.kind === 'stream-sequence' && obs.change === 'reset') truth.clearRank(obs.server, obs.rank);
    },
  };
  const status = new SourceStatusBoard({ sink, clock: Date.now });
  const source = new ZmqEventsSource(
    {
      id: 'w0',
      endpoint: where.endpoint,
      replay: where.replay,
      engine,
      ranks: 1,
      topic: '',
      ...(hitLevel !== undefined ? { hitLevel } : {}),
    },
    { sink, status, clock: Date.now, logger: silentLogger },
    { replayTimeoutMs: 3_000 },
  );
  await source.start();
  cleanups.push(() => source.stop());
  const deadline = Date.now() + 10_000;
  // PUB/SUB joins late: probe until a live batch arrived
  while (source.counters()[0]!.batches === 0 || source.counters()[0]!.replayRequests === 0) {
    if (Date.now() > deadline) throw new Error('the stream never delivered');
    await pub.send({ op: 'empty' });
    await new Promise((r) => setTimeout(r, 30));
  }
  return { pub, truth, source };
}

const blocks = (seed: number, n: number): number[][] =>
  Array.from({ length: n }, (_, b) => Array.from({ length: BS }, (_, i) => seed * 1000 + b * 10 + i));
const keysOf = (tokens: number[][]): BigUint64Array =>
  BigUint64Array.from(v2Chain(tokens.flat(), BS).map(truncateKeyToU64));
const held = (r: Rig): number => r.truth.blockCount('w0');
const levels = (r: Rig): Record<number, number> => r.truth.blocksByLevel('w0', 0);
const oracle = (r: Rig, tokens: number[][]): number => r.truth.bestPrefix('w0', keysOf(tokens)).bestRankBlocks;

describe('ZMQ tables equal the engine truth, against a publisher written from vLLM / SGLang source', () => {
  it('#23.1 vLLM: two copies with one evicted, the GPU copy evicted under a CPU copy, GPU AllBlocksCleared', async () => {
    const r = await rig('vllm');
    const a = blocks(1, 4);
    await r.pub.store(a);
    const again = await r.pub.store(a); // a second physical copy (vLLM does not deduplicate)
    await r.pub.send({ op: 'remove', refs: again });
    await eventually(() => held(r) === 4, 5_000, 'copies');
    const t1 = await r.pub.truth();
    expect(t1.blocks).toBe(4);
    expect(held(r)).toBe(t1.blocks);
    expect(oracle(r, a)).toBe(4);

    const b = blocks(2, 3);
    const refs = await r.pub.store(b);
    await r.pub.send({ op: 'offload', refs });
    await r.pub.send({ op: 'remove', refs });
    const t2 = await r.pub.truth();
    // the offload's stores and the GPU removal arrive as separate batches: wait for the removal too
    await eventually(
      () => levels(r)[1] === 3 && levels(r)[0] === (t2.per_medium.GPU ?? 0),
      5_000,
      'CPU copies, GPU copies removed',
    );
    expect(held(r)).toBe(t2.blocks);
    expect(levels(r)[1]).toBe(t2.per_medium.CPU);
    // GPU is the hit tier by default: CPU-only blocks are resident but not a hit
    expect(oracle(r, b)).toBe(0);

    await r.pub.send({ op: 'clear' });
    const t3 = await r.pub.truth();
    await eventually(() => held(r) === t3.blocks, 5_000, 'GPU cleared');
    expect(t3).toEqual({ blocks: 3, per_medium: { CPU: 3 }, copies: 3 });
    expect(levels(r)).toEqual({ 0: 0, 1: 3 });
    expect(oracle(r, a)).toBe(0);
  });

  it('#23.1 hit_tier cpu: blocks loaded back from CPU count as a hit', async () => {
    const r = await rig('vllm', {}, 1);
    const b = blocks(3, 3);
    const refs = await r.pub.store(b);
    await r.pub.send({ op: 'offload', refs });
    await r.pub.send({ op: 'remove', refs });
    await eventually(() => levels(r)[0] === 0 && levels(r)[1] === 3, 5_000, 'CPU only');
    expect(oracle(r, b)).toBe(3);
  });

  it('#23.1 SGLang HiCache: a host copy outlives the GPU eviction; its reset clears every tier', async () => {
    const r = await rig('sglang');
    const tokens = blocks(10, 3);
    const refs = await r.pub.store(tokens);
    await r.pub.store(tokens, { medium: 'CPU' });
    await r.pub.send({ op: 'remove', refs });
    await eventually(() => levels(r)[0] === 0 && levels(r)[1] === 3, 5_000, 'host copies');
    expect((await r.pub.truth()).per_medium).toEqual({ CPU: 3 });
    expect(held(r)).toBe(3);
    await r.pub.send({ op: 'clear' });
    await eventually(() => held(r) === 0, 5_000, 'reset');
    expect((await r.pub.truth()).blocks).toBe(0);
  });

  it('#23.2 vLLM int hashes: 6 salted blocks stay 6, one tenant evicted keeps the other, no cross-tenant credit', async () => {
    const r = await rig('vllm', { int_hashes: true });
    const tokens = blocks(4, 3);
    const a = await r.pub.store(tokens, { salt: 'tenant-a' });
    await r.pub.store(tokens, { salt: 'tenant-b' });
    await eventually(() => held(r) === 6, 5_000, 'six blocks');
    expect((await r.pub.truth()).blocks).toBe(6);
    await r.pub.send({ op: 'remove', refs: a });
    await eventually(() => held(r) === 3, 5_000, 'tenant a evicted');
    expect((await r.pub.truth()).blocks).toBe(3);
    expect(oracle(r, tokens)).toBe(0);
    // a LoRA adapter's blocks are its own too
    await r.pub.store(tokens, { lora: 'adapter-1' });
    await eventually(() => held(r) === 6, 5_000, 'lora blocks');
    expect(oracle(r, tokens)).toBe(0);
    await r.pub.store(tokens);
    await eventually(() => held(r) === 9, 5_000, 'plain blocks');
    expect((await r.pub.truth()).blocks).toBe(9);
    expect(oracle(r, tokens)).toBe(3);
  });

  it('#23.2 SGLang: salted pages are distinct, evicting one salt keeps the other', async () => {
    const r = await rig('sglang');
    const tokens = blocks(5, 2);
    const a = await r.pub.store(tokens, { salt: 'x' });
    await r.pub.store(tokens, { salt: 'y' });
    await r.pub.send({ op: 'remove', refs: a });
    await eventually(() => held(r) === 2, 5_000, 'salt y kept');
    expect((await r.pub.truth()).blocks).toBe(2);
  });

  it('#23.3 no forever-blocks: a long-lived block removed after heavy churn leaves the table; unmatched removals are counted', async () => {
    const r = await rig('vllm', { int_hashes: true });
    const long = await r.pub.store(blocks(6, 1));
    const churn = Array.from({ length: 300 }, (_, i) => ({ op: 'store', blocks: blocks(100 + i, 1) }));
    const stored = (await r.pub.send({ op: 'batch', ops: churn })).answers as { refs: string[] }[];
    await r.pub.send({ op: 'batch', ops: stored.map((s) => ({ op: 'remove', refs: s.refs })) });
    await r.pub.send({ op: 'remove', refs: long });
    await r.pub.send({ op: 'remove', refs: ['12345'] }); // a hash the engine never stored
    await eventually(() => r.source.counters()[0]!.unmatchedRemovals === 1, 5_000, 'unmatched counted');
    expect((await r.pub.truth()).blocks).toBe(0);
    expect(held(r)).toBe(0);
  });

  it('#23.4 joining late: stores chaining onto history before the subscriber are accepted, removals match', async () => {
    let earlier: string[] = [];
    const r = await rig('vllm', {
      buffer_steps: 3,
      before: async (p: EnginePublisher) => {
        earlier = await p.store(blocks(7, 2));
        for (let i = 0; i < 5; i++) await p.send({ op: 'empty' });
      },
    });
    const child = await r.pub.store(blocks(8, 2), { parent: earlier[1] });
    await eventually(() => held(r) === 2, 5_000, 'late stores held');
    await r.pub.send({ op: 'remove', refs: child });
    await eventually(() => held(r) === 0, 5_000, 'late stores removed');
    expect(r.source.counters()[0]!.unmatchedRemovals).toBe(0);
  });

  it('#23.9 SGLang EAGLE bigram pages are read', async () => {
    const r = await rig('sglang');
    const tokens = blocks(9, 2);
    await r.pub.store(tokens, { bigram: true, next_token: 7 });
    await eventually(() => held(r) === 2, 5_000, 'bigram pages held');
    expect(oracle(r, tokens)).toBe(2);
  });
});
