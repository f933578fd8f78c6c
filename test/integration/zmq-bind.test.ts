// Bind mode (--zmq-bind) against independent vLLM publishers that connect (test/publishers/lifecycle_publisher.py,
// from vLLM's kv_events.py: an endpoint without a wildcard connects, and its port moves by the DP rank), named by
// llm-d's topic convention kv@<pod>@<model>: one bound socket, one table per pod and rank.
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { Observation } from '../../src/core/observe/observation.js';
import { createSentinelState, type SentinelState } from '../../src/core/state/sentinel-state.js';
import { silentLogger } from '../../src/sources/ports.js';
import { SourceStatusBoard } from '../../src/sources/source-status.js';
import { ZmqBindSource, type ZmqBindSpec } from '../../src/sources/zmq/zmq-bind-source.js';
import { decode } from '@msgpack/msgpack';
import { Subscriber } from 'zeromq';
import { buildConfig } from '../../src/app/config/serve-config.js';
import { createDaemon } from '../../src/app/daemon/daemon.js';
import { blockHash, LifecyclePublisher, type LifecyclePublisherOptions } from '../helpers/lifecycle-publisher.js';
import { eventually } from '../helpers/recording-sink.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const MODEL = 'Qwen/Qwen3-0.6B';

/** a base port with `n` consecutive free ports after it */
async function freePorts(n: number): Promise<number> {
  const free = (port: number): Promise<boolean> =>
    new Promise((resolve) => {
      const s = createServer();
      s.once('error', () => resolve(false));
      s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });
  for (;;) {
    const base = 20_000 + Math.floor(Math.random() * 40_000);
    let ok = true;
    for (let i = 0; i < n && ok; i++) ok = await free(base + i);
    if (ok) return base;
  }
}

interface Harness {
  readonly source: ZmqBindSource;
  readonly state: SentinelState;
  readonly status: SourceStatusBoard;
  readonly seen: Observation[];
}

async function bound(port: number, ranks = 1, more: Partial<ZmqBindSpec> = {}): Promise<Harness> {
  const state = createSentinelState({ mode: 'auto' });
  const seen: Observation[] = [];
  const sink = { apply: (o: Observation) => (seen.push(o), state.apply(o)) };
  const status = new SourceStatusBoard({ sink, clock: Date.now });
  const source = new ZmqBindSource(
    { endpoint: `tcp://127.0.0.1:${port}`, engine: 'vllm', ranks, topic: '', ...more },
    { sink, status, clock: Date.now, logger: silentLogger },
  );
  await source.start();
  cleanups.push(() => source.stop());
  return { source, state, status, seen };
}

async function publisher(o: LifecyclePublisherOptions): Promise<LifecyclePublisher> {
  const p = await LifecyclePublisher.start(o);
  cleanups.push(() => p.stop());
  return p;
}

/** PUB connects late: empty batches until the pod's stream delivered one */
async function joined(h: Harness, pub: LifecyclePublisher, server: string, rank = 0): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!h.source.counters().some((c) => c.server === server && c.rank === rank && c.batches > 0)) {
    if (Date.now() > deadline) throw new Error(`${server} never delivered`);
    await pub.send({ op: 'empty' });
    await new Promise((r) => setTimeout(r, 20));
  }
}

const truth = (h: Harness, server: string): number =>
  h.state.diagnosisInput(Date.now()).servers.find((s) => s.server === server)?.truthBlocks ?? -1;

async function storeRoots(pub: LifecyclePublisher, seed: number, n: number): Promise<void> {
  for (let i = 0; i < n; i++) await pub.store([blockHash(seed, i)], null, [seed, seed, i, i]);
}

describe('--zmq-bind: publishers connect to kvsentinel', () => {
  it('names each server by its llm-d topic and keeps one table per pod', async () => {
    const port = await freePorts(1);
    const h = await bound(port);
    const a = await publisher({ endpoint: `tcp://127.0.0.1:${port}`, topic: `kv@pod-a@${MODEL}` });
    const b = await publisher({ endpoint: `tcp://127.0.0.1:${port}`, topic: `kv@10.0.0.7:8000@${MODEL}` });
    await joined(h, a, 'pod-a');
    await joined(h, b, '10.0.0.7:8000');
    await storeRoots(a, 1, 3);
    await storeRoots(b, 2, 5);
    await eventually(() => truth(h, 'pod-a') === 3 && truth(h, '10.0.0.7:8000') === 5, 5_000, 'both tables');
    await a.remove([blockHash(1, 0)]);
    await eventually(() => truth(h, 'pod-a') === 2, 5_000, 'a removal reaches its own pod only');
    expect(truth(h, '10.0.0.7:8000')).toBe(5);
    expect(h.source.sourceNames).toEqual(
      expect.arrayContaining([`zmq-bind:tcp://127.0.0.1:${port}`, 'zmq:pod-a', 'zmq:10.0.0.7:8000']),
    );
  });

  it('a data-parallel rank connects to port + rank and is that rank of its pod', async () => {
    const port = await freePorts(2);
    const h = await bound(port, 2);
    const r0 = await publisher({ endpoint: `tcp://127.0.0.1:${port}`, topic: `kv@pod-a@${MODEL}` });
    const r1 = await publisher({ endpoint: `tcp://127.0.0.1:${port}`, topic: `kv@pod-a@${MODEL}`, dpRank: 1 });
    expect(r1.endpoint).toBe(`tcp://127.0.0.1:${port + 1}`);
    await joined(h, r0, 'pod-a', 0);
    await joined(h, r1, 'pod-a', 1);
    await storeRoots(r0, 3, 2);
    await storeRoots(r1, 4, 4);
    await eventually(() => truth(h, 'pod-a') === 6, 5_000, 'both ranks');
    const ranks = h.state.diagnosisInput(Date.now()).servers.find((s) => s.server === 'pod-a')!.ranks;
    expect(ranks.map((r) => r.rank).sort()).toEqual([0, 1]);
  });

  it('a topic that names no server is counted, not followed', async () => {
    const port = await freePorts(1);
    const h = await bound(port);
    const anon = await publisher({ endpoint: `tcp://127.0.0.1:${port}`, topic: '' });
    const status = () => h.status.list().find((s) => s.source === `zmq-bind:tcp://127.0.0.1:${port}`)!;
    await eventually(
      () => {
        void anon.send({ op: 'empty' });
        return (status().badInput['stream-unnamed-publisher'] ?? 0) > 0;
      },
      10_000,
      'the unnamed publisher counted',
    );
    expect(h.source.counters()).toEqual([]);
  });

  it('a pod that restarts is a new life by its publisher id, and its table starts over', async () => {
    const port = await freePorts(1);
    const h = await bound(port);
    const topic = `kv@pod-a@${MODEL}`;
    const first = await publisher({ endpoint: `tcp://127.0.0.1:${port}`, topic, snapshot: 'batch' });
    await joined(h, first, 'pod-a');
    await storeRoots(first, 5, 4);
    await eventually(() => truth(h, 'pod-a') === 4, 5_000, 'the first life');
    await first.stop();
    const second = await publisher({ endpoint: `tcp://127.0.0.1:${port}`, topic, snapshot: 'batch' });
    // its heartbeat (an empty batch each idle second) reaches the socket once connected: a new id
    const resets = () => h.source.counters().find((c) => c.server === 'pod-a')!.resets;
    await eventually(() => resets() === 1, 10_000, 'the new life seen');
    expect(truth(h, 'pod-a')).toBe(0);
    await storeRoots(second, 6, 2);
    await eventually(() => truth(h, 'pod-a') === 2, 10_000, 'only the new life');
    expect(resets()).toBe(1);
  });

  it('reports a port it cannot bind, and keeps running', async () => {
    const port = await freePorts(1);
    const h = await bound(port);
    const second = await bound(port);
    const status = second.status.list().find((s) => s.source === `zmq-bind:tcp://127.0.0.1:${port}`)!;
    expect(status.up).toBe(false);
    expect(status.lastError).toContain('cannot bind');
    expect(h.source.endpoints).toHaveLength(1);
  });

  it('forward= passes every message on unchanged to the consumer whose socket it took, and still reads its own', async () => {
    const port = await freePorts(2);
    // the displaced consumer (llm-d's scheduler in central mode) binds a port of its own, subscribed to "kv@"
    const scheduler = new Subscriber({ linger: 0 });
    await scheduler.bind(`tcp://127.0.0.1:${port + 1}`);
    scheduler.subscribe('kv@');
    cleanups.push(() => Promise.resolve(scheduler.close()));
    const received: Buffer[][] = [];
    void (async () => {
      try {
        for await (const frames of scheduler) received.push(frames);
      } catch {
        // closed at the end of the test
      }
    })();
    const h = await bound(port, 1, { topic: 'kv@', forward: `tcp://127.0.0.1:${port + 1}` });
    const pod = await publisher({ endpoint: `tcp://127.0.0.1:${port}`, topic: `kv@pod-a@${MODEL}` });
    const other = await publisher({ endpoint: `tcp://127.0.0.1:${port}`, topic: 'metrics' });
    await joined(h, pod, 'pod-a');
    // the forwarding PUB's subscription handshake may land after the first messages: wait until one arrives
    await eventually(
      () => {
        void pod.send({ op: 'empty' });
        return received.length > 0;
      },
      10_000,
      'the scheduler hears the pod through kvsentinel',
    );
    await storeRoots(pod, 7, 3);
    await other.send({ op: 'empty' });
    await eventually(() => truth(h, 'pod-a') === 3, 5_000, "kvsentinel's own table");
    // vLLM's batch [ts, events], its events maps tagged by type (the newest builds)
    type Event = { type: string; block_hashes: Uint8Array[] };
    const eventsOf = (frames: Buffer[]) => (decode(frames[2]!) as [number, Event[]])[1];
    const stores = () => received.filter((f) => eventsOf(f).some((e) => e.type === 'BlockStored'));
    await eventually(() => stores().length === 3, 5_000, 'three stores passed on');
    const seqs = received.map((f) => f[1]!.readBigUInt64BE(0));
    for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBe(seqs[i - 1]! + 1n);
    for (const [i, frames] of stores().entries()) {
      expect(frames).toHaveLength(3);
      expect(frames[0]!.toString()).toBe(`kv@pod-a@${MODEL}`);
      // the block hash is the pod's own, byte for byte
      expect(eventsOf(frames)[0]!.block_hashes.map((b) => Buffer.from(b).toString('hex'))).toEqual([blockHash(7, i)]);
    }
    // a topic kvsentinel does not read still goes on (the scheduler's own subscription filters it out)
    const counts = h.source.forwardCounters();
    expect(counts).toEqual([expect.objectContaining({ to: `tcp://127.0.0.1:${port + 1}`, failed: 0 })]);
    await eventually(() => h.source.forwardCounters()[0]!.forwarded >= received.length + 1, 5_000, 'all forwarded');
    expect(h.source.counters().map((c) => c.server)).toEqual(['pod-a']);
  });

  it("a daemon's /metrics counts what it forwarded and says whether the consumer is connected", async () => {
    const port = await freePorts(2);
    const to = `tcp://127.0.0.1:${port + 1}`;
    const config = buildConfig(
      { web: { listen_address: '127.0.0.1:0' } },
      { zmqBind: [`tcp://127.0.0.1:${port},engine=vllm,topic=kv@,forward=${to}`] },
    );
    const daemon = createDaemon(config);
    await daemon.start();
    cleanups.push(() => daemon.stop());
    const metrics = async (): Promise<string> =>
      (await fetch(`http://127.0.0.1:${daemon.webAddress().port}/metrics`)).text();
    const labels = `endpoint="tcp://127.0.0.1:${port}",to="${to}"`;
    // nothing listens at the consumer's address yet: not connected, and what arrives is dropped
    expect(await metrics()).toContain(`kvsentinel_stream_forward_connected{${labels}} 0`);
    const scheduler = new Subscriber({ linger: 0 });
    await scheduler.bind(to);
    scheduler.subscribe('');
    cleanups.push(() => Promise.resolve(scheduler.close()));
    let heard = 0;
    void (async () => {
      try {
        for await (const _ of scheduler) heard++;
      } catch {
        // closed at the end of the test
      }
    })();
    const pod = await publisher({ endpoint: `tcp://127.0.0.1:${port}`, topic: `kv@pod-a@${MODEL}` });
    await eventually(
      () => {
        void pod.send({ op: 'empty' });
        return heard >= 3;
      },
      10_000,
      'the consumer hears the pod',
    );
    const text = await metrics();
    expect(text).toContain(`kvsentinel_stream_forward_connected{${labels}} 1`);
    const forwarded = Number(new RegExp(`kvsentinel_stream_forwarded_total\\{${labels}\\} (\\d+)`).exec(text)?.[1]);
    expect(forwarded).toBeGreaterThanOrEqual(3);
    expect(text).toContain(`kvsentinel_stream_forward_failures_total{${labels}} 0`);
  });
});
