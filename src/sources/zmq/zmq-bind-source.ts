// Binds one SUB socket per rank that KV-event publishers connect to: vLLM and SGLang publishers connect unless
// their endpoint has a wildcard, and llm-d's central mode points every pod at one bound socket in its scheduler.
// A connecting publisher offsets its port by its data-parallel rank as a binding one does, so the socket bound at
// port + r hears rank r. Frames carry no sender: the server is the one the topic names (publisher-topic.ts), and
// each (server, rank) gets its own RankPipeline (seq, new lives by vLLM's publisher id or a seq that went back,
// tables). There is no replay (each publisher's replay ROUTER is on its own host, unnamed here): an unfilled gap is
// lost. A publisher disconnecting is not attributable to a server, so every stream of that socket checks its next
// batch for a new life. Health: `zmq-bind:ENDPOINT` for the socket, `zmq:SERVER` (`/rankR`) per publisher.
// With `forward`, every message the socket receives goes on unchanged (all frames, whatever its topic, read or not)
// to a PUB that connects to the consumer kvsentinel displaced (llm-d's scheduler, which then binds a port of its
// own): one socket can be bound once, and a vLLM or SGLang publisher connects to one endpoint only.
import { Publisher, Subscriber } from 'zeromq';
import { serverFromTopic } from '../../core/stream/publisher-topic.js';
import type { StreamEngine, StreamOrigin } from '../../core/stream/stream-engine.js';
import { decodeLiveMessage } from '../../core/stream/stream-frames.js';
import type { StreamEventConverter } from '../../core/stream/to-kv-events.js';
import type { VllmHashing } from '../../core/stream/vllm-hash-checker.js';
import type { RunningSource } from '../ports.js';
import { RankPipeline } from './rank-pipeline.js';
import type { ForwardCounters, StreamRankCounters } from '../../core/observe/sidecar-stats.js';
import { streamConverter, streamOrigin } from './stream-origin.js';
import { DEFAULT_ZMQ_OPTIONS, type ZmqSourceDeps, type ZmqSourceOptions } from './zmq-events-source.js';
import { rankEndpoint } from './zmq-endpoints.js';
import { SocketBacklog } from './socket-backlog.js';

export interface ZmqBindSpec {
  /** the address to bind for rank 0 (tcp://*:5557, tcp://0.0.0.0:5557, ipc://PATH); rank r at port + r */
  readonly endpoint: string;
  readonly engine: StreamEngine;
  readonly ranks: number;
  /** ZMQ subscription prefix ('' = everything; llm-d's indexer subscribes to "kv@") */
  readonly topic: string;
  readonly vllmHashing?: VllmHashing;
  /** where to pass every received message on (tcp://HOST:PORT or ipc://PATH; rank r at port + r), if anywhere */
  readonly forward?: string;
}

/** publishers (server × rank) one bound source follows; past it messages are counted, not followed */
export const MAX_BOUND_PUBLISHERS = 1_024;
const HEARTBEAT_CHECK_MS = 1_000;

interface BoundSocket {
  readonly rank: number;
  readonly endpoint: string;
  readonly sub: Subscriber;
  /** the PUB that passes each message on (spec.forward), or null */
  readonly forward: Publisher | null;
  readonly backlog: SocketBacklog;
}

interface ServerStreams {
  readonly converter: StreamEventConverter;
  readonly ranks: Map<number, RankPipeline>;
}

export class ZmqBindSource implements RunningSource {
  readonly name: string;
  readonly spec: ZmqBindSpec;
  readonly #deps: ZmqSourceDeps;
  readonly #options: ZmqSourceOptions;
  readonly #origin: StreamOrigin;
  readonly #topicPrefix: Uint8Array;
  readonly #sockets: BoundSocket[] = [];
  readonly #servers = new Map<string, ServerStreams>();
  readonly #loops: Promise<void>[] = [];
  #publishers = 0;
  readonly #forwardCounts = new Map<number, { forwarded: number; failed: number; connected: boolean }>();
  #heartbeat: NodeJS.Timeout | null = null;
  #started = false;
  #stopped = false;

  constructor(spec: ZmqBindSpec, deps: ZmqSourceDeps, options: Partial<ZmqSourceOptions> = {}) {
    this.name = `zmq-bind:${spec.endpoint}`;
    this.spec = spec;
    this.#deps = deps;
    this.#options = { ...DEFAULT_ZMQ_OPTIONS, ...options };
    this.#origin = streamOrigin(spec.engine, spec.vllmHashing);
    this.#topicPrefix = new TextEncoder().encode(spec.topic);
  }

  /** the socket's health name, then one per publisher heard so far */
  get sourceNames(): string[] {
    const names = [this.name];
    for (const [server, s] of this.#servers) for (const rank of s.ranks.keys()) names.push(this.#source(server, rank));
    return names;
  }

  /** the addresses bound (rank r at index r), once started */
  get endpoints(): string[] {
    return this.#sockets.map((s) => s.endpoint);
  }

  counters(): StreamRankCounters[] {
    const out: StreamRankCounters[] = [];
    for (const [server, s] of this.#servers) for (const [rank, p] of s.ranks) out.push({ server, rank, ...p.counters });
    return out;
  }

  /** per bound rank socket with `forward`: what it passed on */
  forwardCounters(): ForwardCounters[] {
    const forward = this.spec.forward;
    if (forward === undefined) return [];
    return this.#sockets.map((s) => ({
      endpoint: s.endpoint,
      to: rankEndpoint(forward, s.rank),
      ...(this.#forwardCounts.get(s.rank) ?? { forwarded: 0, failed: 0, connected: false }),
    }));
  }

  async start(): Promise<void> {
    if (this.#started) return;
    this.#started = true;
    for (let rank = 0; rank < this.spec.ranks; rank++) {
      const endpoint = rankEndpoint(this.spec.endpoint, rank);
      const sub = new Subscriber({ receiveHighWaterMark: this.#options.receiveHighWaterMark, linger: 0 });
      try {
        await sub.bind(endpoint);
      } catch (err) {
        sub.close();
        this.#deps.status.fail(this.name, 'connect', `cannot bind ${endpoint}: ${String(err)}`);
        this.#deps.logger.error(`${this.name}: cannot bind ${endpoint}`, { error: String(err) });
        continue;
      }
      // a forwarding socket takes every topic: the consumer behind it filters for itself
      sub.subscribe(this.spec.forward !== undefined ? '' : this.spec.topic);
      const socket: BoundSocket = {
        rank,
        endpoint: sub.lastEndpoint ?? endpoint,
        sub,
        forward: this.#forwarder(rank),
        backlog: new SocketBacklog(),
      };
      this.#sockets.push(socket);
      this.#deps.status.ok(this.name);
      // a publisher left: it may come back as a new life, and nothing says which server it was
      sub.events.on('disconnect', () => {
        for (const s of this.#servers.values()) s.ranks.get(rank)?.reconnected();
      });
      this.#loops.push(this.#receive(socket));
    }
    this.#heartbeat = setInterval(() => {
      const now = this.#deps.clock();
      for (const s of this.#servers.values())
        for (const p of s.ranks.values()) p.checkHeartbeat(now, this.#options.heartbeatTimeoutMs);
      for (const s of this.#sockets) if (!s.sub.closed) s.backlog.idleLook(this.#deps.clock);
    }, HEARTBEAT_CHECK_MS);
    this.#heartbeat.unref();
  }

  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    if (this.#heartbeat !== null) clearInterval(this.#heartbeat);
    for (const s of this.#sockets) s.sub.close();
    await Promise.allSettled(this.#loops);
    for (const s of this.#sockets) s.forward?.close();
  }

  #forwarder(rank: number): Publisher | null {
    if (this.spec.forward === undefined) return null;
    const to = rankEndpoint(this.spec.forward, rank);
    // as deep a queue as the receiving side's: a consumer that is slow for a moment loses nothing
    const pub = new Publisher({ sendHighWaterMark: this.#options.receiveHighWaterMark, linger: 0 });
    pub.connect(to);
    const counts = { forwarded: 0, failed: 0, connected: false };
    this.#forwardCounts.set(rank, counts);
    pub.events.on('handshake', () => {
      counts.connected = true;
      this.#deps.logger.info(`${this.name}: forwarding to ${to}`);
    });
    pub.events.on('disconnect', () => {
      counts.connected = false;
      this.#deps.logger.warn(`${this.name}: ${to} disconnected; messages are dropped until it is back`);
    });
    return pub;
  }

  async #pass(socket: BoundSocket, frames: Buffer[]): Promise<void> {
    const counts = this.#forwardCounts.get(socket.rank)!;
    try {
      await socket.forward!.send(frames);
      counts.forwarded++;
    } catch (err) {
      if (this.#stopped) return;
      if (counts.failed++ === 0)
        this.#deps.logger.error(`${this.name}: cannot forward to ${this.spec.forward}`, { error: String(err) });
    }
  }

  #topicWanted(topic: Uint8Array): boolean {
    const want = this.#topicPrefix;
    if (topic.length < want.length) return false;
    for (let i = 0; i < want.length; i++) if (topic[i] !== want[i]) return false;
    return true;
  }

  #source(server: string, rank: number): string {
    return this.spec.ranks > 1 ? `zmq:${server}/rank${rank}` : `zmq:${server}`;
  }

  async #receive(socket: BoundSocket): Promise<void> {
    try {
      // receive() itself rather than the socket's async iterator: the backlog knows when the loop waits on it
      while (!this.#stopped && !socket.sub.closed) {
        socket.backlog.waiting = true;
        const frames = await socket.sub.receive();
        socket.backlog.waiting = false;
        if (this.#stopped) return;
        socket.backlog.taken(this.#deps.clock, socket.sub);
        if (socket.forward !== null) {
          await this.#pass(socket, frames);
          // ZMQ's prefix match, as the socket would have applied it without forwarding
          if (frames.length > 0 && !this.#topicWanted(frames[0]!)) continue;
        }
        const message = decodeLiveMessage(frames);
        if (!message.ok) {
          this.#deps.status.badInput(this.name, message.issue.code);
          continue;
        }
        const named = serverFromTopic(message.value.topic);
        if (named === null) {
          this.#deps.status.badInput(this.name, 'stream-unnamed-publisher');
          continue;
        }
        const pipeline = this.#pipeline(named.server, socket);
        if (pipeline === null) {
          this.#deps.status.badInput(this.name, 'stream-too-many-publishers');
          continue;
        }
        pipeline.live(message.value.seq, message.value.publisherId, message.value.payload);
      }
    } catch (err) {
      if (!this.#stopped) this.#deps.logger.error(`${this.name}: receive failed`, { error: String(err) });
    }
  }

  #pipeline(server: string, socket: BoundSocket): RankPipeline | null {
    const rank = socket.rank;
    let streams = this.#servers.get(server);
    const known = streams?.ranks.get(rank);
    if (known !== undefined) return known;
    if (this.#publishers >= MAX_BOUND_PUBLISHERS) return null;
    if (streams === undefined) {
      streams = { converter: streamConverter(this.spec.engine, this.spec.vllmHashing), ranks: new Map() };
      this.#servers.set(server, streams);
    }
    const ranks = this.spec.ranks;
    const pipeline = new RankPipeline({
      server,
      rank,
      source: this.#source(server, rank),
      name: `${this.name} ${server} rank ${rank}`,
      sink: this.#deps.sink,
      status: this.#deps.status,
      clock: this.#deps.clock,
      logger: this.#deps.logger,
      converter: streams.converter,
      origin: this.#origin,
      statedRank: (batchRank) => (ranks > 1 ? rank : batchRank !== null && batchRank > 0 ? batchRank : null),
      replay: null,
      maxHeldBatches: this.#options.maxHeldBatches,
      // one queue for every publisher of this rank: behind for one, behind for all
      backlog: socket.backlog,
      silenceIsDown: false,
    });
    streams.ranks.set(rank, pipeline);
    this.#publishers++;
    this.#deps.logger.info(`${this.name}: ${server} rank ${rank} connected (topic names it)`, { server });
    this.#deps.sink.apply({
      kind: 'stream-sequence',
      ts: this.#deps.clock(),
      server,
      rank,
      change: 'subscribed',
      lost: 0,
      filled: 0,
    });
    return pipeline;
  }
}
