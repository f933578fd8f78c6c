// `/ws?view=observations`: what a running `serve` observes, for a one-shot `audit --attach` or `record --attach`
// that must not own the data path (ending it must never close the ports the router sends CTX requests to). Each
// client receives every observation the state applies from its connection on, as bundle lines (src/core/bundle:
// the digests the joins need, never prompt text or token ids), so the client audits it exactly as it audits a
// recorded bundle. A client starts with the context the state already holds (the latest router configuration,
// server info, router facts and source health, re-stamped to the connection time), gets a tick every second (the
// sidecar's clock, malformed inputs, source notes), and is disconnected — never silently skipped — when it reads
// too slowly: a stream with a hole would audit to a wrong result.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import { BUNDLE_FORMAT, BUNDLE_VERSION, encodeBundleRecord } from '../core/bundle/bundle-codec.js';
import { KeyHistory } from '../core/bundle/bundle-keys.js';
import type { Observation } from '../core/observe/observation.js';
import type { ObservationDigest } from '../core/state/observation-digester.js';
import type { SentinelMode } from '../core/state/sentinel-state.js';
import type { Clock, Logger } from '../core/observe/ports.js';

export interface ObservationStreamOptions {
  /** clients at once; more are refused (503) */
  readonly maxClients: number;
  /** a client with more than this queued is disconnected (its audit would miss observations) */
  readonly maxBufferedBytes: number;
  /** per client: trajectories whose previous block keys are remembered for delta encoding (bundle key_history) */
  readonly keyHistory: number;
  readonly tickIntervalMs: number;
}

export const DEFAULT_OBSERVATION_STREAM_OPTIONS: ObservationStreamOptions = {
  maxClients: 4,
  maxBufferedBytes: 64 * 1024 * 1024,
  keyHistory: 1024,
  tickIntervalMs: 1_000,
};

/** What the sidecar says of itself to a client: in its hello and every tick. */
export interface ObservationStreamInfo {
  /** the state's vantage point ('auto' infers relay from drained events) and the bundle's (record) */
  readonly mode: SentinelMode;
  readonly recordingMode: SentinelMode;
  readonly tableBlocksPerServer: number;
  readonly sources: () => readonly string[];
  /** malformed input items the sources skipped so far */
  readonly malformed: () => number;
  /** what sources that read fine lack (a quiet orchestrator log) */
  readonly notes: () => readonly string[];
}

/** the close code of a client that read too slowly (a private-use code, 4000–4999) */
export const SLOW_CLIENT_CLOSE = 4008;

interface Client {
  readonly ws: WebSocket;
  readonly history: KeyHistory;
  pending: string;
}

/** the latest observation of each kind that sets context (not counted), by what it is about */
function contextKey(o: Observation): string | null {
  switch (o.kind) {
    case 'router-config':
      return `router-config|${o.source}`;
    case 'server-info':
      return `server-info|${o.server}`;
    case 'router-server-fact':
      return `router-server-fact|${o.server}|${o.fact}`;
    case 'source-health':
      return `source-health|${o.source}`;
    // cumulative: the latest says everything counted so far
    case 'sidecar-stats':
      return 'sidecar-stats';
    case 'worker-events':
    case 'sidecar-load':
    case 'stream-sequence':
    case 'router-poll':
    case 'poll-failure':
    case 'router-state':
    case 'router-score':
    case 'decision':
    case 'outcome':
    case 'render-check':
      return null;
  }
}

export class ObservationStream {
  readonly #wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });
  readonly #clients = new Set<Client>();
  readonly #context = new Map<string, Observation>();
  readonly #options: ObservationStreamOptions;
  readonly #info: ObservationStreamInfo;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #version: string;
  #flushing = false;
  #timer: NodeJS.Timeout | undefined;
  #refused = 0;
  #slow = 0;

  constructor(
    deps: { info: ObservationStreamInfo; clock: Clock; logger: Logger; version: string },
    options: Partial<ObservationStreamOptions> = {},
  ) {
    this.#info = deps.info;
    this.#clock = deps.clock;
    this.#logger = deps.logger;
    this.#version = deps.version;
    this.#options = { ...DEFAULT_OBSERVATION_STREAM_OPTIONS, ...options };
  }

  get clients(): number {
    return this.#clients.size;
  }

  /** clients disconnected because they read too slowly */
  get slowClients(): number {
    return this.#slow;
  }

  get refusedClients(): number {
    return this.#refused;
  }

  start(): void {
    this.#timer ??= setInterval(() => this.#tick(), this.#options.tickIntervalMs);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#flush();
    for (const c of this.#clients) c.ws.close(1001, 'kvsentinel stopping');
    this.#clients.clear();
    await new Promise<void>((resolve) => this.#wss.close(() => resolve()));
  }

  /** Takes an HTTP upgrade for /ws?view=observations. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    if (this.#clients.size >= this.#options.maxClients) {
      this.#refused++;
      const body = 'too many observation clients\n';
      socket.end(
        `HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`,
      );
      return;
    }
    this.#wss.handleUpgrade(req, socket, head, (ws) => {
      const client: Client = { ws, history: new KeyHistory(this.#options.keyHistory), pending: '' };
      ws.on('error', () => ws.terminate());
      ws.on('close', () => this.#clients.delete(client));
      const now = this.#clock();
      const hello = {
        type: 'hello',
        ts: now,
        version: this.#version,
        stream: 'observations',
        format: BUNDLE_FORMAT,
        bundle_version: BUNDLE_VERSION,
        key_history: this.#options.keyHistory,
        mode: this.#info.mode,
        recording_mode: this.#info.recordingMode,
        table_blocks_per_server: this.#info.tableBlocksPerServer,
        sources: this.#info.sources(),
        malformed: this.#info.malformed(),
      };
      client.pending = `${JSON.stringify(hello)}\n`;
      // the context the state already holds, as of now
      for (const o of this.#context.values()) client.pending += this.#line(client, { ...o, ts: now }, null);
      this.#clients.add(client);
      this.#scheduleFlush();
    });
  }

  /** One observation the state applied (SentinelState.onApplied). Never throws into the state. */
  publish(observation: Observation, digest: ObservationDigest | null): void {
    const key = contextKey(observation);
    if (key !== null) this.#context.set(key, observation);
    if (this.#clients.size === 0) return;
    try {
      for (const c of this.#clients) c.pending += this.#line(c, observation, digest);
    } catch (err) {
      this.#logger.error('observation stream: cannot encode an observation', {
        kind: observation.kind,
        error: String(err),
      });
    }
    this.#scheduleFlush();
  }

  #line(client: Client, observation: Observation, digest: ObservationDigest | null): string {
    return `${encodeBundleRecord({ observation, digest }, client.history, false)}\n`;
  }

  #tick(): void {
    if (this.#clients.size === 0) return;
    const tick = JSON.stringify({
      type: 'tick',
      ts: this.#clock(),
      malformed: this.#info.malformed(),
      notes: this.#info.notes(),
    });
    for (const c of this.#clients) c.pending += `${tick}\n`;
    this.#flush();
  }

  #scheduleFlush(): void {
    if (this.#flushing) return;
    this.#flushing = true;
    setImmediate(() => {
      this.#flushing = false;
      this.#flush();
    });
  }

  #flush(): void {
    for (const c of this.#clients) {
      if (c.pending === '') continue;
      const text = c.pending;
      c.pending = '';
      if (c.ws.readyState !== WebSocket.OPEN) continue;
      if (c.ws.bufferedAmount > this.#options.maxBufferedBytes) {
        this.#slow++;
        this.#clients.delete(c);
        c.ws.close(SLOW_CLIENT_CLOSE, 'read too slowly: observations would be lost');
        continue;
      }
      c.ws.send(text);
    }
  }
}
