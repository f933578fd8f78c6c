// Drives test/publishers/lifecycle_publisher.py, an independent vLLM publisher written from vLLM's source: one
// process per publisher life (a restart is a new process, with a new seq and publisher id), commands on stdin,
// one JSON answer per command on stdout.
import { createHash } from 'node:crypto';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { repoRoot } from './paths.js';

export interface LifecyclePublisherOptions {
  /** the PUB endpoint as vLLM's setting has it: a wildcard binds, a host connects */
  readonly endpoint: string;
  readonly replayEndpoint?: string;
  readonly bufferSteps?: number;
  readonly topic?: string;
  readonly dpRank?: number;
  readonly snapshot?: 'none' | 'frame' | 'batch';
  readonly prelude?: number;
  readonly preludeSeed?: number;
}

interface Ready {
  readonly endpoint: string;
  readonly replay: string | null;
  readonly publisher_id: string | null;
}

export class LifecyclePublisher {
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #lines: string[] = [];
  readonly #waiters: ((line: string) => void)[] = [];
  readonly #stderr: string[] = [];
  #exited = false;
  ready!: Ready;

  private constructor(child: ChildProcessWithoutNullStreams) {
    this.#child = child;
    createInterface({ input: child.stdout }).on('line', (line) => {
      const w = this.#waiters.shift();
      if (w !== undefined) w(line);
      else this.#lines.push(line);
    });
    child.stderr.on('data', (d: Buffer) => this.#stderr.push(d.toString()));
    child.on('exit', () => {
      this.#exited = true;
    });
  }

  static async start(o: LifecyclePublisherOptions): Promise<LifecyclePublisher> {
    const args = [join(repoRoot, 'test/publishers/lifecycle_publisher.py'), '--endpoint', o.endpoint];
    if (o.replayEndpoint !== undefined) args.push('--replay-endpoint', o.replayEndpoint);
    if (o.bufferSteps !== undefined) args.push('--buffer-steps', String(o.bufferSteps));
    if (o.topic !== undefined) args.push('--topic', o.topic);
    if (o.dpRank !== undefined) args.push('--dp-rank', String(o.dpRank));
    if (o.snapshot !== undefined) args.push('--snapshot', o.snapshot);
    if (o.prelude !== undefined)
      args.push('--prelude', String(o.prelude), '--prelude-seed', String(o.preludeSeed ?? 0));
    const p = new LifecyclePublisher(spawn('/usr/bin/python3', args, { stdio: 'pipe' }));
    p.ready = JSON.parse(await p.#next()) as Ready;
    return p;
  }

  /** host:port a subscriber connects to (the bound address, wildcard resolved) */
  get endpoint(): string {
    return this.ready.endpoint;
  }

  async #next(): Promise<string> {
    const line = this.#lines.shift();
    if (line !== undefined) return line;
    if (this.#exited) throw new Error(`publisher exited: ${this.#stderr.join('')}`);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`publisher silent: ${this.#stderr.join('')}`)), 15_000);
      this.#waiters.push((l) => {
        clearTimeout(timer);
        resolve(l);
      });
    });
  }

  /** Sends one command and waits until the publisher sent what it queued; returns the last seq it used. */
  async send(cmd: Record<string, unknown>): Promise<number> {
    this.#child.stdin.write(`${JSON.stringify(cmd)}\n`);
    const answer = JSON.parse(await this.#next()) as { ok: boolean; seq: number };
    if (!answer.ok) throw new Error(`publisher refused ${JSON.stringify(cmd)}`);
    return answer.seq;
  }

  store(hashes: readonly string[], parent: string | null, tokens: readonly number[], blockSize = 4): Promise<number> {
    return this.send({ op: 'store', hashes, parent, tokens, block_size: blockSize });
  }

  remove(hashes: readonly string[]): Promise<number> {
    return this.send({ op: 'remove', hashes });
  }

  /** Pauses (SIGSTOP) or resumes (SIGCONT) the process: a hung engine keeps its sockets open and sends nothing. */
  pause(paused: boolean): void {
    this.#child.kill(paused ? 'SIGSTOP' : 'SIGCONT');
  }

  /** Ends this life: the process exits and its sockets close. */
  async stop(): Promise<void> {
    if (this.#exited) return;
    const exited = new Promise<void>((resolve) => this.#child.once('exit', () => resolve()));
    this.#child.kill('SIGCONT');
    this.#child.kill('SIGKILL');
    await exited;
  }
}

/** A 32-byte hash as vLLM's sha256 block hash is on the wire, hex, distinct per (seed, i). */
export function blockHash(seed: number, i: number): string {
  return createHash('sha256').update(`block-${seed}-${i}`).digest('hex');
}
