// The vLLM-format flood publisher (test/publishers/flood_publisher.py, written from vLLM's ZmqEventPublisher) as a
// child process: it binds, says where, floods on `go`, and reports what it sent.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { repoRoot } from './paths.js';

const PUBLISHER = join(repoRoot, 'test/publishers/flood_publisher.py');

export interface FloodDone {
  readonly sent: number;
  readonly resident: number;
  readonly replay_requests: number;
  /** requests from a seq the publisher's buffer no longer held */
  readonly late_requests: number;
}

export interface Flood {
  readonly endpoint: string;
  /** the publisher's replay ROUTER, when it has one */
  readonly replay: string | null;
  go(): void;
  done(): Promise<FloodDone>;
}

export interface FloodOptions {
  readonly batches: number;
  /** batches/s; null: as fast as the publisher can */
  readonly rate: number | null;
  /** bind vLLM's replay ROUTER and keep its buffer */
  readonly replay: boolean;
  /** batches sent slowly after the flood (the load has fallen) */
  readonly tail: number;
  /** every this-many-th seq is never sent */
  readonly skipEvery: number | null;
  /** the PUB socket's high-water mark */
  readonly hwm: number;
}

/** Starts the publisher; its process is ended by a cleanup pushed onto `cleanups`. */
export async function startFlood(cleanups: (() => Promise<void> | void)[], o: FloodOptions): Promise<Flood> {
  const proc = spawn('/usr/bin/python3', [
    PUBLISHER,
    JSON.stringify({
      batches: o.batches,
      lag: 256,
      hwm: o.hwm,
      replay: o.replay,
      tail: o.tail,
      ...(o.skipEvery !== null ? { skip_every: o.skipEvery } : {}),
      ...(o.rate !== null ? { rate: o.rate } : {}),
    }),
  ]);
  cleanups.push(() => {
    proc.stdin.end('quit\n');
    proc.kill();
  });
  const lines = createInterface({ input: proc.stdout })[Symbol.asyncIterator]();
  const next = async (): Promise<Record<string, unknown>> => {
    const r = await lines.next();
    if (r.done === true) throw new Error('the flood publisher exited (needs /usr/bin/python3 with zmq and msgpack)');
    return JSON.parse(r.value) as Record<string, unknown>;
  };
  const hello = await next();
  return {
    endpoint: String(hello.endpoint),
    replay: typeof hello.replay === 'string' ? hello.replay : null,
    go: () => proc.stdin.write('go\n'),
    done: async () => (await next()) as unknown as FloodDone,
  };
}
