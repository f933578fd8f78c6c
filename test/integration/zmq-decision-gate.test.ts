// A server's ZMQ stream passes the same DecisionGate as its relay (issue #23.7): while the relay still reads a
// request's body (its decision slot open), the blocks that request just stored — published on the worker's stream —
// wait, so they never count toward the oracle of the decision taken without them. Real ZMQ sockets, the daemon's
// own source wiring (sourceSpecsFor), the real state behind it.
import { afterEach, describe, expect, it } from 'vitest';
import { buildConfig } from '../../src/app/config/serve-config.js';
import { decisionGateOf, sourceSpecsFor, type SourceContext } from '../../src/app/daemon/daemon-sources.js';
import type { Observation } from '../../src/core/observe/observation.js';
import { ZmqKvPublisher } from '../../src/sim/live/zmq-kv-publisher.js';
import { silentLogger } from '../../src/sources/ports.js';
import { SourceStatusBoard } from '../../src/sources/source-status.js';
import type { ZmqEventsSource } from '../../src/sources/zmq/zmq-events-source.js';
import { kvEvent, storedBlock } from '../helpers/kv-event-builders.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function until(what: string, done: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("a server's ZMQ stream waits behind its relay's open decisions", () => {
  it('holds the stream batch until the decision is recorded, then applies both in that order', async () => {
    const pub = new ZmqKvPublisher({ format: 'vllm', ranks: 1, blockSize: 4, replay: false });
    await pub.start();
    cleanups.push(() => pub.stop());
    const seen: Observation[] = [];
    const sink = { apply: (o: Observation) => void seen.push(o) };
    // only what the ZMQ source uses; the relay-only parts of the context stay out of this test
    const context = {
      sink,
      status: new SourceStatusBoard({ sink, clock: Date.now }),
      clock: Date.now,
      logger: silentLogger,
      gates: new Map(),
    } as unknown as SourceContext;
    const config = buildConfig({ zmq: [{ id: 'ctx0', endpoint: pub.endpoint, engine: 'vllm', ranks: 1 }] }, {});
    const spec = sourceSpecsFor(config, context).find((s) => s.key.startsWith('zmq '))!;
    const source = spec.make().source as ZmqEventsSource;
    await source.start();
    cleanups.push(() => source.stop());
    // PUB/SUB joins late: probe with empty batches until one arrived
    await until('the subscription', () => {
      void pub.sendBatch(0, pub.batch(0, []));
      return source.counters()[0]!.batches > 0;
    });
    const before = seen.length;

    // the relay read a CTX request's body end: its decision takes a slot, then the worker stores its blocks
    const fill = decisionGateOf(context, 'ctx0').slot();
    pub.publish(0, kvEvent({ type: 'stored', parentHash: null, blocks: [storedBlock(11n, 0, [1, 2, 3, 4])] }));
    const batches = source.counters()[0]!.batches;
    await until('the stored batch to reach the source', () => source.counters()[0]!.batches > batches);
    expect(seen.slice(before).filter((o) => o.kind === 'worker-events')).toEqual([]);
    expect(decisionGateOf(context, 'ctx0').held).toBeGreaterThan(0);

    const decision: Observation = {
      kind: 'decision',
      ts: Date.now(),
      requestId: 'r1',
      correlationId: null,
      server: 'ctx0',
      promptTokens: new Uint32Array([1, 2, 3, 4]),
      promptTokenCount: 4,
      inflight: null,
    };
    fill(decision);
    const after = seen.slice(before).map((o) => o.kind);
    expect(after.indexOf('decision')).toBeGreaterThanOrEqual(0);
    expect(after.indexOf('worker-events')).toBeGreaterThan(after.indexOf('decision'));
  });
});
