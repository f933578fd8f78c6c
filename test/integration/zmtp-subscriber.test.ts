// kvsentinel's ZMTP subscriber against real libzmq sockets (zeromq.js binds them; pyzmq, in the engines' publishers,
// is the same libzmq): the handshake, topic filtering, reconnection, refusal of what is not a publisher, heartbeats,
// the high-water mark and a handler that throws.
import { createServer } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Publisher, Router } from 'zeromq';
import {
  DEFAULT_ZMTP_OPTIONS,
  ZmtpSubscriber,
  type ZmtpSubscriberEvents,
  type ZmtpSubscriberOptions,
} from '../../src/sources/zmq/zmtp-subscriber.js';
import { startFlood } from '../helpers/flood-publisher.js';
import { cleanupsAfterEach, freePort } from '../helpers/test-resources.js';

const cleanups = cleanupsAfterEach();
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function eventually(check: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

interface Heard {
  readonly log: string[];
  readonly messages: string[][];
}

function subscriber(
  endpoint: string,
  topic = '',
  options: Partial<ZmtpSubscriberOptions> = {},
  onMessage: (frames: Uint8Array[]) => void = () => undefined,
): { sub: ZmtpSubscriber; heard: Heard } {
  const heard: Heard = { log: [], messages: [] };
  const events: ZmtpSubscriberEvents = {
    handshake: () => void heard.log.push('handshake'),
    retry: (reason) => void heard.log.push(`retry ${reason}`),
    disconnect: () => void heard.log.push('disconnect'),
    refused: (reason) => void heard.log.push(`refused ${reason}`),
    message: (frames) => {
      heard.messages.push(frames.map((f) => Buffer.from(f).toString('latin1')));
      onMessage(frames);
    },
    idle: () => undefined,
    failed: (err) => void heard.log.push(`failed ${String(err)}`),
  };
  const sub = new ZmtpSubscriber(endpoint, topic, { ...DEFAULT_ZMTP_OPTIONS, reconnectMs: 50, ...options }, events);
  cleanups.push(() => Promise.resolve(sub.close()));
  return { sub, heard };
}

async function publisher(
  endpoint: string,
  options: ConstructorParameters<typeof Publisher>[0] = {},
): Promise<Publisher> {
  const pub = new Publisher({ linger: 0, ...options });
  await pub.bind(endpoint);
  cleanups.push(() => Promise.resolve(pub.close()));
  return pub;
}

/** PUB/SUB joins late: sends `frames` until the subscriber has one more message */
async function sendUntilHeard(pub: Publisher, heard: Heard, frames: string[]): Promise<void> {
  const before = heard.messages.length;
  const deadline = Date.now() + 10_000;
  while (heard.messages.length === before) {
    if (Date.now() > deadline) throw new Error('the subscriber never received a message');
    await pub.send(frames);
    await sleep(20);
  }
}

describe('ZmtpSubscriber against libzmq', () => {
  it('completes the handshake with a PUB, takes only its topic, and keeps every message whole and in order', async () => {
    const endpoint = `tcp://127.0.0.1:${await freePort()}`;
    // no send high-water mark: a PUB drops what its pipe cannot hold (1,000 by default), and CI's load once made it
    // drop some of these 2,000 sends, which this test is not about
    const pub = await publisher(endpoint, { sendHighWaterMark: 0 });
    const { sub, heard } = subscriber(endpoint, 'kv@');
    sub.connect();
    await sendUntilHeard(pub, heard, ['kv@probe', 'x', '']);
    expect(heard.log).toEqual(['handshake']);
    heard.messages.length = 0;
    const long = 'p'.repeat(70_000);
    for (let i = 0; i < 1_000; i++) {
      await pub.send(['other', String(i), 'not ours']);
      await pub.send(['kv@a', String(i), i % 100 === 0 ? long : `batch ${i}`]);
    }
    await eventually(() => heard.messages.length === 1_000, '1,000 messages');
    expect(heard.messages.every((m, i) => m[0] === 'kv@a' && m[1] === String(i))).toBe(true);
    expect(heard.messages[100]![2]).toBe(long);
    expect(heard.messages[101]![2]).toBe('batch 101');
  });

  it("sends each handshake step after the publisher's, so libzmq never drops the connection: 20 fresh publishers", async () => {
    // a READY sent with the greeting made libzmq drop about one connection in three before its greeting was out
    for (let i = 0; i < 20; i++) {
      const pub = new Publisher({ linger: 0 });
      await pub.bind('tcp://127.0.0.1:0');
      cleanups.push(() => Promise.resolve(pub.close()));
      const { sub, heard } = subscriber(pub.lastEndpoint!);
      sub.connect();
      await eventually(() => heard.log.length > 0, 'the handshake');
      expect(heard.log, `publisher ${i}`).toEqual(['handshake']);
      sub.close();
    }
  });

  it('over ipc:// as well', async () => {
    const endpoint = `ipc://${join(mkdtempSync(join(tmpdir(), 'kvs-zmtp-')), 'pub.sock')}`;
    const pub = await publisher(endpoint);
    const { sub, heard } = subscriber(endpoint);
    sub.connect();
    await sendUntilHeard(pub, heard, ['', 'seq', 'payload']);
    expect(heard.messages.at(-1)).toEqual(['', 'seq', 'payload']);
  });

  it('retries while nothing listens, and connects when the publisher binds; after it goes, again', async () => {
    const endpoint = `tcp://127.0.0.1:${await freePort()}`;
    const { sub, heard } = subscriber(endpoint);
    sub.connect();
    await eventually(() => heard.log.length >= 2, 'two retries');
    expect(heard.log.slice(0, 2)).toEqual(['retry ECONNREFUSED', 'retry ECONNREFUSED']);
    const first = await publisher(endpoint);
    await sendUntilHeard(first, heard, ['', 'life 1', '']);
    expect(heard.log.filter((l) => !l.startsWith('retry'))).toEqual(['handshake']);
    first.close();
    await eventually(() => heard.log.includes('disconnect'), 'the disconnect');
    const second = await publisher(endpoint);
    await sendUntilHeard(second, heard, ['', 'life 2', '']);
    expect(heard.log.filter((l) => !l.startsWith('retry'))).toEqual(['handshake', 'disconnect', 'handshake']);
    expect(heard.messages.at(-1)?.[1]).toBe('life 2');
  });

  it('refuses what is not a publisher, saying why: an HTTP server, a ROUTER, a CURVE server', async () => {
    const http = createServer((_, res) => res.end());
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise<void>((r) => http.close(() => r())));
    const httpPort = (http.address() as { port: number }).port;
    const web = subscriber(`tcp://127.0.0.1:${httpPort}`);
    web.sub.connect();
    await eventually(() => web.heard.log.length > 0, 'the HTTP refusal');
    expect(web.heard.log[0]).toBe('refused not a ZMTP greeting (it starts 48 54 54 50 2f 31 2e 31 20 34)');

    const routerEndpoint = `tcp://127.0.0.1:${await freePort()}`;
    const router = new Router({ linger: 0 });
    await router.bind(routerEndpoint);
    cleanups.push(() => Promise.resolve(router.close()));
    const wrongType = subscriber(routerEndpoint);
    wrongType.sub.connect();
    await eventually(() => wrongType.heard.log.length > 0, 'the ROUTER refusal');
    // libzmq's READY is out before it reads ours
    expect(wrongType.heard.log[0]).toBe('refused the peer is a ROUTER socket, not a publisher');

    const curveEndpoint = `tcp://127.0.0.1:${await freePort()}`;
    await publisher(curveEndpoint, { curveServer: true, curveSecretKey: '0'.repeat(40) });
    const curve = subscriber(curveEndpoint);
    curve.sub.connect();
    await eventually(() => curve.heard.log.length > 0, 'the CURVE refusal');
    // libzmq closes as soon as it reads our NULL, often before its own greeting is all out (under load, before any
    // of it): each form says what to look at
    expect(curve.heard.log[0]).toMatch(
      /^(refused the publisher asks for the CURVE security mechanism; only NULL is spoken here|retry the publisher closed the connection during the greeting \(it wants a security mechanism other than NULL\?\)|retry the peer closed the connection before its greeting \(not a ZMQ socket, or one that wants a security mechanism other than NULL\?\))$/,
    );
  });

  it("answers the publisher's heartbeat, so a PUB with a heartbeat timeout keeps it", async () => {
    const endpoint = `tcp://127.0.0.1:${await freePort()}`;
    const pub = await publisher(endpoint, { heartbeatInterval: 50, heartbeatTimeout: 200 });
    const { sub, heard } = subscriber(endpoint);
    sub.connect();
    await sendUntilHeard(pub, heard, ['', 'first', '']);
    // ten heartbeat timeouts with no traffic but the PONGs
    await sleep(2_000);
    await sendUntilHeard(pub, heard, ['', 'after', '']);
    expect(heard.log, heard.log.join('; ')).toEqual(['handshake']);
  });

  it('stops reading at its high-water mark, so the publisher drops the newest, and reads again once it drained', async () => {
    // the vLLM-format flood publisher (its own process) with a PUB high-water mark of 1,000, at full speed, into a
    // subscriber that spends 50 µs on each batch
    const flood = await startFlood(cleanups, {
      batches: 100_000,
      rate: null,
      replay: false,
      tail: 20,
      skipEvery: null,
      hwm: 1_000,
    });
    const seqs: number[] = [];
    let peak = 0;
    const { sub, heard } = subscriber(flood.endpoint, '', { receiveHighWaterMark: 500 }, (frames) => {
      peak = Math.max(peak, sub.queued);
      seqs.push(Buffer.from(frames[1]!).readUInt32BE(4));
      const until = performance.now() + 0.05;
      while (performance.now() < until);
    });
    sub.connect();
    await eventually(() => heard.log.includes('handshake'), 'the handshake');
    await sleep(300);
    flood.go();
    const done = await flood.done();
    await eventually(() => seqs.at(-1) === done.sent - 1, 'the last batch of the slow tail');
    // what got through is in order, from the first batch, and not all of it: the publisher dropped the rest
    expect(seqs[0]).toBe(0);
    expect(seqs.every((s, i) => i === 0 || s > seqs[i - 1]!)).toBe(true);
    expect(seqs.length).toBeLessThan(done.sent);
    // its own queue never held more than the mark and what one read brought (a read is at most 64 KiB)
    expect(peak).toBeLessThan(500 + 65_536 / 100);
  }, 60_000);

  it('reads the socket again after about a millisecond of handing on, however many messages wait', async () => {
    // the kernel's receive buffer caps what one read takes: a subscriber that reads only every 512 batches takes no
    // faster than it reads, and the publisher's queue overflows while its own stays empty
    const flood = await startFlood(cleanups, {
      batches: 5_000,
      rate: null,
      replay: false,
      tail: 0,
      skipEvery: null,
      hwm: 100_000,
    });
    let turn = 0;
    let ticking = true;
    const tick = (): void => {
      turn++;
      if (ticking) setImmediate(tick);
    };
    cleanups.push(() => Promise.resolve(void (ticking = false)));
    const perTurn = new Map<number, number>();
    let peakQueued = 0;
    const { sub, heard } = subscriber(flood.endpoint, '', {}, () => {
      perTurn.set(turn, (perTurn.get(turn) ?? 0) + 1);
      peakQueued = Math.max(peakQueued, sub.queued);
      const until = performance.now() + 0.1;
      while (performance.now() < until);
    });
    sub.connect();
    await eventually(() => heard.log.includes('handshake'), 'the handshake');
    await sleep(300);
    tick();
    flood.go();
    await flood.done();
    await eventually(() => heard.messages.length >= 4_000, '4,000 batches', 30_000);
    ticking = false;
    // a backlog built up (the handler is slower than the publisher), yet each turn of the event loop handed on
    // what fits in about a millisecond (10 messages of 0.1 ms), not a slice of 512
    expect(peakQueued).toBeGreaterThan(500);
    expect(Math.max(...perTurn.values())).toBeLessThanOrEqual(20);
  }, 60_000);

  it('ends a connection whose frame is above the bound, after the messages before it, and says why', async () => {
    const endpoint = `tcp://127.0.0.1:${await freePort()}`;
    const pub = await publisher(endpoint);
    const { sub, heard } = subscriber(endpoint, '', { maxFrameBytes: 1_000, refusedRetryMs: 60_000 });
    sub.connect();
    await sendUntilHeard(pub, heard, ['', 'probe', '']);
    await pub.send(['', 'before', '']);
    await pub.send(['', 'big', 'x'.repeat(2_000)]);
    await pub.send(['', 'after', '']);
    await eventually(() => heard.log.length === 3, 'the refusal');
    expect(heard.log.slice(0, 2)).toEqual(['handshake', 'disconnect']);
    expect(heard.log[2]).toMatch(/^refused a frame of 2000 bytes at byte \d+ of the stream, above the bound of 1000$/);
    expect(heard.messages.at(-1)?.[1]).toBe('before');
  });

  it('a handler that throws is told, and the next message is handed on', async () => {
    const endpoint = `tcp://127.0.0.1:${await freePort()}`;
    const pub = await publisher(endpoint);
    const { sub, heard } = subscriber(endpoint, '', {}, (frames) => {
      if (Buffer.from(frames[1]!).toString() === 'bad') throw new Error('boom');
    });
    sub.connect();
    await sendUntilHeard(pub, heard, ['', 'probe', '']);
    await pub.send(['', 'bad', '']);
    await pub.send(['', 'good', '']);
    await eventually(() => heard.messages.length === 3, 'both messages');
    expect(heard.log).toEqual(['handshake', 'failed Error: boom']);
  });
});
