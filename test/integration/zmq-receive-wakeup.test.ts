// A ZMQ source must never ask its socket whether it is readable while a receive waits on it. zeromq's `readable` is
// a getsockopt of ZMQ_EVENTS, which takes the socket's wake-up signal: asked while a receive waits (the source's
// once-a-second look at its queue did this), it can leave that receive waiting for good, and the stream goes deaf
// with nothing to say so (seen here as a stalled subscriber that applied its first 100 batches and no more). The
// test watches every `readable` read and every receive of the real sockets, through a stream with idle seconds in it.
// The bound socket (--zmq-bind) is a zeromq Subscriber; a subscribing source speaks ZMTP over a Node socket, with no
// zeromq socket to ask, and is checked here for the same symptom: every batch arrives through idle seconds.
import { afterEach, describe, expect, it } from 'vitest';
import type { Observation } from '../../src/core/observe/observation.js';
import { ZmqKvPublisher } from '../../src/sim/live/zmq-kv-publisher.js';
import { silentLogger } from '../../src/sources/ports.js';
import { SourceStatusBoard } from '../../src/sources/source-status.js';
import { ZmqBindSource } from '../../src/sources/zmq/zmq-bind-source.js';
import { ZmqEventsSource } from '../../src/sources/zmq/zmq-events-source.js';
import { encodeSeq } from '../../src/core/stream/stream-frames.js';
import { encode } from '@msgpack/msgpack';
import { Publisher, Subscriber } from 'zeromq';
import { freePort } from '../helpers/test-resources.js';

/** zeromq's own `readable` getter and `receive`, from the native Socket prototype under Subscriber's */
function socketMembers(): { readable: PropertyDescriptor; receive: PropertyDescriptor } {
  for (let p: object | null = Subscriber.prototype; p !== null; p = Object.getPrototypeOf(p) as object | null) {
    const readable = Object.getOwnPropertyDescriptor(p, 'readable');
    const receive = Object.getOwnPropertyDescriptor(p, 'receive');
    if (readable !== undefined && receive !== undefined) return { readable, receive };
  }
  throw new Error("zeromq's Socket prototype has no readable/receive");
}

/**
 * Counts reads of `readable` made while a receive of the same socket is pending, by shadowing both on
 * Subscriber.prototype (the native ones cannot be redefined); undo() removes the shadows.
 */
function watchSubscribers(): { readsWhileWaiting: () => number; reads: () => number; undo: () => void } {
  const { readable, receive } = socketMembers();
  const owner = Subscriber.prototype;
  expect(Object.getOwnPropertyDescriptor(owner, 'readable')).toBeUndefined();
  expect(Object.getOwnPropertyDescriptor(owner, 'receive')).toBeUndefined();
  const pending = new WeakMap<object, number>();
  let reads = 0;
  let whileWaiting = 0;
  const { get } = readable as { get: (this: object) => unknown };
  const call = receive.value as (this: object) => Promise<unknown>;
  Object.defineProperty(owner, 'readable', {
    configurable: true,
    get(this: object) {
      reads++;
      if ((pending.get(this) ?? 0) > 0) whileWaiting++;
      return get.call(this) as boolean;
    },
  });
  Object.defineProperty(owner, 'receive', {
    configurable: true,
    writable: true,
    value(this: object) {
      pending.set(this, (pending.get(this) ?? 0) + 1);
      const settle = (): void => void pending.set(this, (pending.get(this) ?? 1) - 1);
      const p = call.call(this);
      p.then(settle, settle);
      return p;
    },
  });
  return {
    readsWhileWaiting: () => whileWaiting,
    reads: () => reads,
    undo: () => {
      delete (owner as { readable?: unknown }).readable;
      delete (owner as { receive?: unknown }).receive;
    },
  };
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const BURST = 300;
const BURSTS = 3;

/**
 * PUB/SUB joins late: probes with `send` until a batch arrives; then bursts of more than one counted look's worth of
 * batches, the loop waiting through the once-a-second look between them. Every batch must arrive, and the source
 * must have looked at its queue (so the watch saw its reads), never while a receive waited.
 */
async function burstsAcrossIdleLooks(
  send: () => Promise<unknown>,
  batches: () => number,
  watch: ReturnType<typeof watchSubscribers> | null,
): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (batches() === 0) {
    if (Date.now() > deadline) throw new Error('the subscriber never received a batch');
    await send();
    await sleep(20);
  }
  const before = batches();
  for (let burst = 0; burst < BURSTS; burst++) {
    for (let i = 0; i < BURST; i++) await send();
    await sleep(1_300);
  }
  expect(batches() - before).toBe(BURSTS * BURST);
  if (watch === null) return;
  expect(watch.reads()).toBeGreaterThan(0);
  expect(watch.readsWhileWaiting()).toBe(0);
}

describe("a ZMQ source's looks at its queue", () => {
  it('a subscribing source (ZMTP over a Node socket, no zeromq socket to ask) takes every batch through idle seconds', async () => {
    const pub = new ZmqKvPublisher({ format: 'vllm', ranks: 1, blockSize: 4, replay: false });
    await pub.start();
    cleanups.push(() => pub.stop());
    const seen: Observation[] = [];
    const sink = { apply: (o: Observation) => void seen.push(o) };
    const source = new ZmqEventsSource(
      { id: 'ctx0', endpoint: pub.endpoint, replay: null, engine: 'vllm', ranks: 1, topic: '' },
      { sink, status: new SourceStatusBoard({ sink, clock: Date.now }), clock: Date.now, logger: silentLogger },
    );
    await source.start();
    cleanups.push(() => source.stop());
    await burstsAcrossIdleLooks(
      () => pub.sendBatch(0, pub.batch(0, [])),
      () => source.counters()[0]!.batches,
      null,
    );
  }, 30_000);

  it('the bound socket (--zmq-bind) never reads `readable` while a receive waits, with a vLLM publisher connecting to it', async () => {
    const watch = watchSubscribers();
    cleanups.push(() => watch.undo());
    const port = await freePort();
    const seen: Observation[] = [];
    const sink = { apply: (o: Observation) => void seen.push(o) };
    const source = new ZmqBindSource(
      { endpoint: `tcp://127.0.0.1:${port}`, engine: 'vllm', ranks: 1, topic: '' },
      { sink, status: new SourceStatusBoard({ sink, clock: Date.now }), clock: Date.now, logger: silentLogger },
    );
    await source.start();
    cleanups.push(() => source.stop());
    // vLLM's publisher connects when its endpoint has no wildcard; llm-d's topic names the pod
    const pub = new Publisher({ linger: 0 });
    pub.connect(`tcp://127.0.0.1:${port}`);
    cleanups.push(() => pub.close());
    let seq = 0n;
    const send = (): Promise<void> =>
      pub.send([
        'kv@pod-a@model',
        encodeSeq(seq++),
        encode({ ts: Date.now() / 1000, events: [], data_parallel_rank: 0 }),
      ]);
    const batches = (): number => source.counters().find((c) => c.server === 'pod-a')?.batches ?? 0;
    await burstsAcrossIdleLooks(send, batches, watch);
  }, 30_000);
});
