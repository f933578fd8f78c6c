// One flood of a real ZMQ socket: the vLLM-format Python publisher (test/publishers/flood_publisher.py) and one
// subscriber task (bench/tasks/zmq-subscriber.ts), each its own process, talking to the bench over JSON lines.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { ZmqSubscriberParams, ZmqSubscriberResult } from '../tasks/zmq-subscriber.js';
import { benchBuildDir, repoRoot } from './paths.js';

export interface FloodParams {
  readonly batches: number;
  /** batches/s; null: as fast as the publisher can */
  readonly rate: number | null;
  readonly subscriber: ZmqSubscriberParams['mode'];
  /** the publisher binds vLLM's replay ROUTER (its defaults) and keeps its buffer; the sidecar is told of it */
  readonly replay?: boolean;
  /** node flags of the subscriber (a CPU profile) */
  readonly nodeFlags?: readonly string[];
}

export interface FloodResult extends ZmqSubscriberResult {
  readonly sent: number;
  /** the publisher's send time, seconds */
  readonly sendSeconds: number;
  /** blocks the publisher's engine holds at the end */
  readonly engineBlocks: number;
  /** replay requests the publisher answered, and those from a seq its buffer no longer held */
  readonly replayRequests: number;
  readonly lateRequests: number;
}

interface LineChild {
  readonly proc: ChildProcessWithoutNullStreams;
  next(): Promise<Record<string, unknown>>;
  stderr(): string;
}

function lineChild(command: string, args: readonly string[]): LineChild {
  const proc = spawn(command, [...args], { cwd: repoRoot, stdio: ['pipe', 'pipe', 'pipe'] });
  let err = '';
  proc.stderr.on('data', (b: Buffer) => {
    err = (err + b.toString('utf8')).slice(-20_000);
  });
  proc.stdin.on('error', () => undefined);
  const lines = createInterface({ input: proc.stdout })[Symbol.asyncIterator]();
  return {
    proc,
    stderr: () => err,
    next: async () => {
      for (;;) {
        const r = await lines.next();
        if (r.done === true) throw new Error(`${command} ${args[0] ?? ''} exited:\n${err.slice(-4000)}`);
        const text = String(r.value).trim();
        if (text.startsWith('{')) return JSON.parse(text) as Record<string, unknown>;
      }
    },
  };
}

export async function runFlood(p: FloodParams): Promise<FloodResult> {
  const publisher = lineChild('/usr/bin/python3', [
    join(repoRoot, 'test/publishers/flood_publisher.py'),
    JSON.stringify({
      batches: p.batches,
      lag: 256,
      block_size: 16,
      replay: p.replay === true,
      ...(p.rate !== null ? { rate: p.rate } : {}),
    }),
  ]);
  let subscriber: LineChild | null = null;
  try {
    const { endpoint, replay } = (await publisher.next()) as { endpoint: string; replay: string | null };
    const params: ZmqSubscriberParams = { mode: p.subscriber, endpoint, replay, quietMs: 3_000 };
    subscriber = lineChild(process.execPath, [
      // the task reads its live heap after a full GC at the end
      '--expose-gc',
      ...(p.nodeFlags ?? []),
      join(benchBuildDir, 'task.js'),
      'zmq-subscriber',
      JSON.stringify(params),
    ]);
    await subscriber.next(); // ready: subscribed
    publisher.proc.stdin.write('go\n');
    const done = (await publisher.next()) as {
      sent: number;
      seconds: number;
      resident: number;
      replay_requests: number;
      late_requests: number;
    };
    subscriber.proc.stdin.write(`${JSON.stringify({ sent: done.sent })}\n`);
    const result = (await subscriber.next()) as unknown as ZmqSubscriberResult;
    // a profiled subscriber writes its profile when it exits by itself
    const sub = subscriber.proc;
    await new Promise<void>((r) => {
      if (sub.exitCode !== null) return r();
      const timer = setTimeout(r, 15_000);
      sub.once('exit', () => (clearTimeout(timer), r()));
    });
    return {
      ...result,
      sent: done.sent,
      sendSeconds: done.seconds,
      engineBlocks: done.resident,
      replayRequests: done.replay_requests,
      lateRequests: done.late_requests,
    };
  } finally {
    publisher.proc.stdin.end('quit\n');
    publisher.proc.kill();
    if (subscriber !== null && subscriber.proc.exitCode === null) subscriber.proc.kill();
  }
}
