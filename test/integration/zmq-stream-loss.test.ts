// One lost stream batch is lost KV state (issue 23 item 9): the real daemon subscribed to a TensorRT-LLM-format
// publisher over real ZMQ sockets. Five batches the publisher never sent (its queue full) and that no replay can
// refill leave their blocks missing from the table: event-queue-shared says so as a warning (its alert, on the
// critical series, stays quiet). The same five batches lost live but refilled by replay leave nothing to report.
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { buildConfig } from '../../src/app/config/serve-config.js';
import { createDaemon, type Daemon } from '../../src/app/daemon/daemon.js';
import { ZmqKvPublisher } from '../../src/sim/live/zmq-kv-publisher.js';
import type { KvEvent } from '../../src/core/wire/kv-event.js';
import { kvEvent, storedBlock } from '../helpers/kv-event-builders.js';
import { eventually } from '../helpers/recording-sink.js';

const cleanups: (() => Promise<void>)[] = [];

/** full 4-token blocks (the V2 stream publishes no partial ones), each hash its own root */
function stored(hashes: readonly bigint[]): KvEvent {
  return kvEvent(
    {
      type: 'stored',
      parentHash: null,
      blocks: hashes.map((h) =>
        storedBlock(
          h,
          0,
          [1, 2, 3, 4].map((t) => (Number(h % 40_000n) + t) % 50_000),
        ),
      ),
    },
    { hashAlgo: 'v2_sha256_64' },
  );
}
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function subscribed(replay: boolean): Promise<{ pub: ZmqKvPublisher; daemon: Daemon; blocks: () => number }> {
  const pub = new ZmqKvPublisher({ format: 'trtllm', ranks: 1, blockSize: 4, replay });
  await pub.start();
  cleanups.push(() => pub.stop());
  const daemon = createDaemon(
    buildConfig(
      {
        web: { listen_address: '127.0.0.1:0' },
        zmq: [
          {
            id: 'ctx0',
            endpoint: pub.endpoint,
            engine: 'trtllm',
            ranks: 1,
            ...(replay ? { replay_endpoint: pub.replayEndpoint } : {}),
          },
        ],
      },
      {},
    ),
  );
  await daemon.start();
  cleanups.push(() => daemon.stop());
  const blocks = (): number =>
    (daemon.snapshot().servers.find((s) => s.server === 'ctx0')?.ranks ?? []).reduce(
      (n, r) => n + Object.values(r.blocksByLevel).reduce((m, b) => m + b, 0),
      0,
    );
  // PUB/SUB joins late: probe with one block until the subscriber hears it (earlier probes are history, not loss)
  let hash = 1n;
  const deadline = Date.now() + 10_000;
  while (blocks() === 0) {
    if (Date.now() > deadline) throw new Error('the subscriber never heard the publisher');
    pub.publish(0, stored([hash++]));
    await pub.flush();
    await new Promise((r) => setTimeout(r, 50));
  }
  return { pub, daemon, blocks };
}

/** 10 batches of 10 blocks each (hashes from 1000); the 5 after the first 5 dropped as `replayable` says */
async function publishWithLoss(pub: ZmqKvPublisher, replayable: boolean): Promise<void> {
  for (let b = 0; b < 10; b++) {
    if (b === 5) pub.dropNext(5, replayable);
    const hashes = Array.from({ length: 10 }, (_, i) => BigInt(1000 + 10 * b + i));
    pub.publish(0, stored(hashes));
    await pub.flush();
  }
  // the gap shows only with the next batch after it
  pub.publish(0, stored([5000n]));
  await pub.flush();
}

describe('a ZMQ stream that loses batches for good', () => {
  it('one unrecoverable gap: the missing blocks, and a warning that says the tables miss that state', async () => {
    const { pub, daemon, blocks } = await subscribed(false);
    const before = blocks();
    await publishWithLoss(pub, false);
    await eventually(() => blocks() === before + 51, 5_000, 'the batches that arrived');
    const finding = () => daemon.snapshot().findings.find((f) => f.id === 'event-queue-shared');
    await eventually(() => finding() !== undefined, 10_000, 'event-queue-shared');
    const shared = finding()!;
    expect(shared.severity).toBe('warning');
    expect(shared.servers).toEqual(['ctx0']);
    expect(shared.summary).toMatch(
      /^stream gaps: 1 seq gap on the ZMQ KV-event streams of ctx0 lost 5 batches replay could not refill: the blocks those batches stored and removed are missing/,
    );
    expect(shared.evidence).toMatchObject({ stream_gaps: 1, lost_batches: 5, gaps_by_rank: 'ctx0/rank0:1' });
    expect(shared.fix).toContain('replay_endpoint');
    // a warning: the KvEventQueueShared alert reads the critical series, which stays 0
    const metrics = await (await request(`http://127.0.0.1:${daemon.webAddress().port}/metrics`)).body.text();
    expect(metrics).toContain(
      'kvsentinel_finding_server_active{id="event-queue-shared",severity="warning",server="ctx0"} 1',
    );
    expect(metrics).toContain(
      'kvsentinel_finding_server_active{id="event-queue-shared",severity="critical",server="ctx0"} 0',
    );
    expect(daemon.snapshot().verdict).not.toBe('healthy');
  }, 30_000);

  it('the same gap refilled by replay: every block arrives and nothing is reported', async () => {
    const { pub, daemon, blocks } = await subscribed(true);
    const before = blocks();
    await publishWithLoss(pub, true);
    await eventually(() => blocks() === before + 101, 10_000, 'every batch, the replayed ones too');
    // the daemon evaluates once a second: two evaluations after the gap was filled
    await new Promise((r) => setTimeout(r, 2_500));
    expect(daemon.snapshot().findings.map((f) => f.id)).not.toContain('event-queue-shared');
  }, 30_000);
});
