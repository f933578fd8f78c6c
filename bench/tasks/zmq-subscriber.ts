// Service task: one subscriber to a flooding ZMQ publisher (bench/sections/zmq.ts), in its own process.
//   sidecar: the real daemon (createDaemon, the config `--zmq` builds) subscribed to the publisher: its ZMQ source,
//            rank pipeline, decision gate and state, as `kvsentinel serve` runs them; counts come from its /metrics
//            exposition and the table from its snapshot.
//   bare:    a zeromq Subscriber that only decodes each payload with @msgpack/msgpack and checks the seq follows:
//            the floor of a Node subscriber on zeromq.js.
//   bare-zmtp: the same over kvsentinel's own ZMTP subscriber (the sidecar's transport): the floor of the sidecar.
// Prints {"ready": true} once subscribed, then reads one line {"sent": N} (the publisher finished) and prints its
// result when every batch arrived or nothing arrived for `quietMs`.
import { createInterface } from 'node:readline';
import { decode } from '@msgpack/msgpack';
import { Subscriber } from 'zeromq';
import { buildConfig } from '../../src/app/config/serve-config.js';
import { createDaemon } from '../../src/app/daemon/daemon.js';
import { DEFAULT_ZMTP_OPTIONS, ZmtpSubscriber } from '../../src/sources/zmq/zmtp-subscriber.js';
import { peakRssBytes } from '../lib/proc-cpu.js';

export type SubscriberMode = 'sidecar' | 'bare' | 'bare-zmtp';

export interface ZmqSubscriberParams {
  readonly mode: SubscriberMode;
  readonly endpoint: string;
  /** sidecar: the publisher's replay ROUTER, or null */
  readonly replay: string | null;
  /** no batch for this long after the publisher finished: the rest were lost */
  readonly quietMs: number;
}

export interface ZmqSubscriberResult {
  readonly mode: SubscriberMode;
  /** batches decoded in seq order and (sidecar) applied to the tables */
  readonly applied: number;
  /** batches the subscriber itself counted lost in seq gaps */
  readonly gapLost: number;
  readonly malformed: number;
  /** sidecar: blocks resident in the worker's table at the end */
  readonly residentBlocks: number | null;
  /** from the publisher's go to the last batch applied (sampled every 250 ms), seconds */
  readonly seconds: number;
  /** CPU seconds of this process over the run (all threads) */
  readonly cpuSeconds: number;
  /** the process's peak resident set (Linux VmHWM), bytes */
  readonly peakRssBytes: number;
  /** the largest V8 heap in use and the largest external memory (Buffers, zeromq's messages) sampled every 250 ms */
  readonly heapPeakBytes: number;
  readonly externalPeakBytes: number;
  /** the V8 heap in use after a full GC at the end: what the subscriber holds, not garbage awaiting collection */
  readonly liveHeapBytes: number;
  /**
   * times the connection to the publisher dropped: a loss while the subscriber's queue stayed small is a reconnect
   * (the publisher drops what it held for the old connection) or a stall, and this tells which
   */
  readonly disconnects: number;
}

/** The peak resident set of this process so far: the kernel's high-water mark, not a sample that may miss it. */
const peakRss = (): number => peakRssBytes(process.pid) ?? process.memoryUsage().rss;

interface Probe {
  readonly connected: () => boolean;
  readonly counts: () => Promise<{ applied: number; gapLost: number; malformed: number }>;
  readonly residentBlocks: () => number | null;
  readonly disconnects: () => number;
  readonly stop: () => Promise<void>;
}

/** The metric's value for the rank-0 series of server ctx0 in a text exposition. */
function metric(text: string, name: string): number {
  const m = new RegExp(`^kvsentinel_${name}\\{[^}]*\\} (\\S+)$`, 'm').exec(text);
  return m === null ? 0 : Number(m[1]);
}

async function sidecar(endpoint: string, replay: string | null): Promise<Probe> {
  const stream = {
    id: 'ctx0',
    endpoint,
    engine: 'vllm',
    ranks: 1,
    ...(replay !== null ? { replay_endpoint: replay } : {}),
  };
  let disconnects = 0;
  const daemon = createDaemon(buildConfig({ web: { listen_address: '127.0.0.1:0' }, zmq: [stream] }, {}), {
    // its errors on stderr: a receive loop that died would otherwise look like loss
    logger: {
      info: () => undefined,
      // the source's status logs each time it goes down (zmq-events-source.ts words a dropped connection so)
      warn: (message) => {
        if (message.includes('the publisher disconnected')) disconnects++;
      },
      error: (message, fields) => process.stderr.write(`${message} ${JSON.stringify(fields ?? {})}\n`),
    },
  });
  await daemon.start();
  return {
    connected: () => daemon.status.list().some((s) => s.source === 'zmq:ctx0' && s.up),
    counts: async () => {
      const text = await daemon.exporter.metrics();
      return {
        applied: metric(text, 'stream_batches_total'),
        gapLost: metric(text, 'stream_batches_lost_total'),
        malformed: metric(text, 'stream_malformed_total'),
      };
    },
    residentBlocks: () =>
      (daemon.snapshot().servers.find((s) => s.server === 'ctx0')?.ranks ?? []).reduce(
        (n, r) => n + Object.values(r.blocksByLevel).reduce((m, b) => m + b, 0),
        0,
      ),
    disconnects: () => disconnects,
    stop: () => daemon.stop(),
  };
}

/** Counts what a bare subscriber takes: decoded payloads in seq order, and the seqs it never saw. */
function decodeCounter(): {
  take: (seqFrame: Uint8Array | undefined, payload: Uint8Array | undefined) => void;
  counts: () => { applied: number; gapLost: number; malformed: number };
} {
  let applied = 0;
  let gapLost = 0;
  let malformed = 0;
  let next = -1n;
  return {
    take: (seqFrame, payload) => {
      if (seqFrame === undefined || payload === undefined || seqFrame.length !== 8) {
        malformed++;
        return;
      }
      const seq = Buffer.from(seqFrame.buffer, seqFrame.byteOffset, 8).readBigUInt64BE(0);
      if (next >= 0n && seq > next) gapLost += Number(seq - next);
      next = seq + 1n;
      try {
        decode(payload, { useBigInt64: true });
        applied++;
      } catch {
        malformed++;
      }
    },
    counts: () => ({ applied, gapLost, malformed }),
  };
}

function bare(endpoint: string): Probe {
  const sub = new Subscriber({ receiveHighWaterMark: 100_000, linger: 0 });
  let connected = false;
  let disconnects = 0;
  sub.events.on('handshake', () => (connected = true));
  sub.events.on('disconnect', () => disconnects++);
  sub.connect(endpoint);
  sub.subscribe('');
  const counter = decodeCounter();
  void (async () => {
    for await (const [, seqFrame, payload] of sub) counter.take(seqFrame, payload);
  })().catch(() => undefined);
  return {
    connected: () => connected,
    counts: () => Promise.resolve(counter.counts()),
    residentBlocks: () => null,
    disconnects: () => disconnects,
    stop: () => {
      sub.close();
      return Promise.resolve();
    },
  };
}

function bareZmtp(endpoint: string): Probe {
  const counter = decodeCounter();
  let connected = false;
  let disconnects = 0;
  const sub = new ZmtpSubscriber(endpoint, '', DEFAULT_ZMTP_OPTIONS, {
    handshake: () => (connected = true),
    retry: () => undefined,
    disconnect: () => disconnects++,
    refused: (reason) => process.stderr.write(`refused: ${reason}\n`),
    message: (frames) => counter.take(frames[1], frames[2]),
    idle: () => undefined,
    failed: (err) => process.stderr.write(`failed: ${String(err)}\n`),
  });
  sub.connect();
  return {
    connected: () => connected,
    counts: () => Promise.resolve(counter.counts()),
    residentBlocks: () => null,
    disconnects: () => disconnects,
    stop: () => {
      sub.close();
      return Promise.resolve();
    },
  };
}

function liveHeap(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function runZmqSubscriber(params: ZmqSubscriberParams): Promise<ZmqSubscriberResult> {
  const probe =
    params.mode === 'sidecar'
      ? await sidecar(params.endpoint, params.replay)
      : params.mode === 'bare'
        ? bare(params.endpoint)
        : bareZmtp(params.endpoint);
  const deadline = Date.now() + 10_000;
  while (!probe.connected()) {
    if (Date.now() > deadline) throw new Error(`never connected to ${params.endpoint}`);
    await sleep(20);
  }
  // the subscription takes effect a moment after the handshake
  await sleep(500);
  const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
  const cpu0 = process.cpuUsage();
  const first = performance.now();
  let last = first;
  let seen = 0;
  // sampled as a scraper would (each sample renders /metrics): the last batch's time is known to 250 ms
  let heapPeak = 0;
  let externalPeak = 0;
  const sampler = setInterval(() => {
    const m = process.memoryUsage();
    heapPeak = Math.max(heapPeak, m.heapUsed);
    externalPeak = Math.max(externalPeak, m.external);
    void probe.counts().then((c) => {
      if (c.applied > seen) {
        seen = c.applied;
        last = performance.now();
      }
    });
  }, 250);
  const line = await lines.next();
  const sent = (JSON.parse(String(line.value)) as { sent: number }).sent;
  let quietSince = performance.now();
  let progress = 0;
  for (;;) {
    await sleep(250);
    const c = await probe.counts();
    if (c.applied + c.gapLost >= sent) break;
    if (c.applied > progress) {
      progress = c.applied;
      quietSince = performance.now();
      if (c.applied > seen) {
        seen = c.applied;
        last = quietSince;
      }
    } else if (performance.now() - quietSince > params.quietMs) break;
  }
  clearInterval(sampler);
  const c = await probe.counts();
  const cpu = process.cpuUsage(cpu0);
  const result: ZmqSubscriberResult = {
    mode: params.mode,
    applied: c.applied,
    gapLost: c.gapLost,
    malformed: c.malformed,
    residentBlocks: probe.residentBlocks(),
    seconds: (last - first) / 1000,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    peakRssBytes: peakRss(),
    heapPeakBytes: heapPeak,
    externalPeakBytes: externalPeak,
    liveHeapBytes: liveHeap(),
    disconnects: probe.disconnects(),
  };
  await probe.stop();
  return result;
}
