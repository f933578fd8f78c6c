// Property test of a live relay port (WorkerRelay over real HTTP) in front of a scripted worker: generated
// schedules of event bursts, concurrent polls from several consumers (the same consumer twice at once included),
// drains that fail (HTTP 500, garbage, truncated JSON), and consumers that hang up while their poll waits for a slow
// drain. Every consumer must receive every event the worker handed over exactly once and in order, except events
// the buffer counts as dropped to that consumer (backlog overflow); every failed drain is counted by reason.
// 200 schedules per CI run over real sockets (KVS_RELAY_SCHEDULES=n for more): this one proves the HTTP wiring
// (hang-ups seen through socket close, bodies byte for byte). The relay's logic itself runs 1 000 schedules per CI
// run over an in-memory worker in relay-path-schedules.test.ts, and the buffer is checked against a model over
// 1 000 schedules in event-buffer-model.test.ts.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { splitJsonArray } from '../../src/core/relay/split-json-array.js';
import { parseKvEvents } from '../../src/core/wire/parse-kv-events.js';
import { InflightTracker } from '../../src/sources/relay/inflight-tracker.js';
import { WorkerRelay } from '../../src/sources/relay/worker-relay.js';
import { silentLogger } from '../../src/sources/ports.js';
import { SourceStatusBoard } from '../../src/sources/source-status.js';
import { RecordingSink, eventually } from '../helpers/recording-sink.js';

type DrainMode = 'ok' | 'http-500' | 'garbage' | 'truncated' | 'hold';

const eventText = (id: number): string =>
  `{"event_id":${id},"data":{"type":"removed","block_hashes":[${18_446_744_073_709_551_615n - BigInt(id)}]},"window_size":4096}`;
const idOf = (t: string): number => Number(/"event_id":(\d+)/.exec(t)?.[1]);

/** A destructive event queue like a CTX worker's; each drain answers as the script says. */
class ScriptedWorker {
  readonly server: Server;
  queue: string[] = [];
  nextId = 0;
  /** ids handed over in a well-formed body, in order */
  readonly good: number[] = [];
  readonly script: DrainMode[] = [];
  readonly counts: Record<DrainMode, number> = { ok: 0, 'http-500': 0, garbage: 0, truncated: 0, hold: 0 };
  drainArrived: () => void = () => undefined;
  release: () => void = () => undefined;

  constructor() {
    this.server = createServer((req, res) => {
      req.resume();
      void (async () => {
        const mode = this.script.shift() ?? 'ok';
        this.counts[mode]++;
        if (mode === 'http-500') return void res.writeHead(500).end('{"detail":"boom"}');
        if (mode === 'hold') {
          const released = new Promise<void>((r) => (this.release = r));
          this.drainArrived();
          await released;
        }
        const items = this.queue.splice(0);
        let body = `[${items.join(',')}]`;
        if (mode === 'garbage') body = '<html>502 Bad Gateway</html>';
        else if (mode === 'truncated') body = body.slice(0, Math.max(1, body.length - 7));
        else this.good.push(...items.map(idOf));
        res.writeHead(200, { 'content-type': 'application/json' }).end(body);
      })();
    });
  }

  emit(n: number): void {
    for (let k = 0; k < n; k++) this.queue.push(eventText(this.nextId++));
  }

  async start(): Promise<string> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }
}

type Step =
  | { readonly kind: 'emit'; readonly n: number }
  | { readonly kind: 'polls'; readonly consumers: readonly number[]; readonly fault: DrainMode }
  | { readonly kind: 'hang-up'; readonly c: number };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('emit' as const), n: fc.integer({ min: 1, max: 8 }) }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('polls' as const),
      consumers: fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 1, maxLength: 4 }),
      fault: fc.constantFrom<DrainMode>('ok', 'ok', 'ok', 'http-500', 'garbage', 'truncated'),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('hang-up' as const), c: fc.integer({ min: 0, max: 2 }) }) },
);

async function poll(base: string, consumer: number, signal?: AbortSignal): Promise<string[]> {
  const res = await request(`${base}/kv_cache_events`, {
    method: 'POST',
    headers: { 'x-kvsentinel-consumer': `router-${consumer}` },
    ...(signal !== undefined ? { signal } : {}),
  });
  const text = await res.body.text();
  expect(res.statusCode).toBe(200);
  const split = splitJsonArray(text);
  if (!split.ok) throw new Error(split.issue.message);
  return split.items;
}

export const RELAY_SCHEDULES = Number(process.env.KVS_RELAY_SCHEDULES ?? 200);

describe('relay port under generated schedules', () => {
  it(`exactly once and in order per consumer, under concurrent polls, failing drains and hang-ups (${RELAY_SCHEDULES} schedules)`, async () => {
    let hangUps = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(stepArb, { minLength: 1, maxLength: 10 }),
        fc.integer({ min: 3, max: 40 }),
        async (steps, maxEvents) => {
          const worker = new ScriptedWorker();
          const upstream = await worker.start();
          const sink = new RecordingSink();
          const status = new SourceStatusBoard({ sink, clock: Date.now });
          const relay = new WorkerRelay(
            { id: 'ctx0', upstream, host: '127.0.0.1', port: 0 },
            {
              sink,
              status,
              clock: Date.now,
              logger: silentLogger,
              inflight: new InflightTracker(),
              parseEvents: parseKvEvents,
            },
            { drainIntervalMs: 3_600_000, drainTimeoutMs: 2_000, buffer: { maxEvents } },
          );
          await relay.start();
          await relay.drainNow();
          const base = `http://127.0.0.1:${relay.address().port}`;
          const received: number[][] = [[], [], []];
          const take = (c: number, items: string[]): void => {
            const ids = items.map(idOf);
            for (let k = 1; k < ids.length; k++) expect(ids[k]).toBeGreaterThan(ids[k - 1] as number); // in order within an answer
            received[c]?.push(...ids);
          };
          try {
            for (const c of [0, 1, 2]) take(c, await poll(base, c)); // every router replica is known from the start
            for (const step of steps) {
              if (step.kind === 'emit') worker.emit(step.n);
              else if (step.kind === 'polls') {
                worker.script.push(step.fault);
                const answers = await Promise.all(step.consumers.map((c) => poll(base, c)));
                answers.forEach((items, k) => take(step.consumers[k] as number, items));
              } else {
                // the router's poll times out while the worker is slow: it hangs up; its events must wait for it
                hangUps++;
                const abandoned = relay.abandonedPolls;
                worker.script.push('hold');
                const arrived = new Promise<void>((r) => (worker.drainArrived = r));
                const abort = new AbortController();
                const pending = poll(base, step.c, abort.signal).then(
                  () => 'answered',
                  () => 'aborted',
                );
                await arrived;
                abort.abort();
                expect(await pending).toBe('aborted');
                await eventually(() => relay.abandonedPolls === abandoned + 1, 5_000, 'the relay sees the hang-up');
                worker.release();
              }
            }
            worker.script.length = 0;
            for (const c of [0, 1, 2]) take(c, await poll(base, c));
            const stats = relay.bufferStats();
            for (const c of [0, 1, 2]) {
              const got = [...(received[c] ?? [])].sort((a, b) => a - b);
              expect(new Set(got).size).toBe(got.length); // never twice
              const dropped = stats.consumers.find((x) => x.consumer === `router-${c}`)?.dropped ?? -1;
              expect({ c, got: got.length, dropped, good: worker.good.length, counts: worker.counts }).toEqual({
                c,
                got: worker.good.length - dropped,
                dropped,
                good: worker.good.length,
                counts: worker.counts,
              }); // every good event delivered, or counted as dropped
              const good = new Set(worker.good);
              for (const id of got) expect(good.has(id)).toBe(true);
              // the dropped ones are the oldest of an overflow, never events after a delivered one in a later run
              if (dropped === 0) expect(got).toEqual(worker.good);
            }
            if (stats.evicted === 0) for (const c of stats.consumers) expect(c.dropped).toBe(0);
            const s = status.list().find((x) => x.source === 'relay:ctx0');
            expect(s?.errors.http_status ?? 0).toBe(worker.counts['http-500']);
            expect(s?.errors.parse ?? 0).toBe(worker.counts.garbage + worker.counts.truncated);
          } finally {
            worker.release();
            await relay.stop();
            await worker.close();
          }
        },
      ),
      { numRuns: RELAY_SCHEDULES },
    );
    expect(hangUps).toBeGreaterThan(0);
  }, 120_000);
});
