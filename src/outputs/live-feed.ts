// The /ws live feed: decisions, outcomes and source changes as they happen, finding changes and table stats from
// snapshots taken on an interval. A slow client is skipped (frames dropped for it, counted), never buffered without
// bound, and never slows the relay: broadcasting is a non-blocking send per client. Clients of the live report page
// (`/ws?view=report`) get the page's content instead, re-rendered every reportIntervalMs while any is connected.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import type { Observation } from '../core/observe/observation.js';
import type { SentinelSnapshot } from '../core/state/snapshot.js';
import type { Clock, Logger, ObservationSink } from '../core/observe/ports.js';
import type { JoinedEvent } from '../core/state/joined-events.js';
import { formatClock, formatZone } from './time-text.js';
import {
  decisionFrame,
  findingChanges,
  observationFrame,
  outcomeFrame,
  statsFrame,
  withDecisionJoin,
  withOutcomeJoin,
  type LiveFrame,
} from './live-frames.js';
import type { Finding } from '../core/diagnosis/finding.js';

export interface LiveFeedOptions {
  readonly snapshotIntervalMs: number;
  /** stats frames every this many ms (a multiple of snapshotIntervalMs in practice) */
  readonly statsIntervalMs: number;
  /** frames are dropped for a client with more than this many bytes queued */
  readonly maxBufferedBytes: number;
  /** clients connected at once; more are refused (503, counted): each may queue maxBufferedBytes */
  readonly maxClients: number;
  /** report frames to live report pages every this many ms */
  readonly reportIntervalMs: number;
}

export const DEFAULT_LIVE_FEED_OPTIONS: LiveFeedOptions = {
  snapshotIntervalMs: 1_000,
  statsIntervalMs: 5_000,
  maxBufferedBytes: 4 * 1024 * 1024,
  maxClients: 64,
  reportIntervalMs: 2_000,
};

export class LiveFeed implements ObservationSink {
  readonly #wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });
  readonly #snapshot: () => SentinelSnapshot;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #options: LiveFeedOptions;
  readonly #version: string;
  /** the live report page's content; null: no report view */
  readonly #report: (() => string) | null;
  /** clients that asked for the report view (they get no other frames) */
  readonly #reportClients = new Set<WebSocket>();
  #lastReportAt = -Infinity;
  #timer: NodeJS.Timeout | undefined;
  #findings: readonly Finding[] = [];
  #lastStatsAt = -Infinity;
  #dropped = 0;
  #refused = 0;
  readonly #sourceUp = new Map<string, boolean>();

  constructor(
    deps: { snapshot: () => SentinelSnapshot; clock: Clock; logger: Logger; version: string; report?: () => string },
    options: Partial<LiveFeedOptions> = {},
  ) {
    this.#snapshot = deps.snapshot;
    this.#report = deps.report ?? null;
    this.#clock = deps.clock;
    this.#logger = deps.logger;
    this.#version = deps.version;
    this.#options = { ...DEFAULT_LIVE_FEED_OPTIONS, ...options };
  }

  get clients(): number {
    return this.#wss.clients.size;
  }

  get droppedFrames(): number {
    return this.#dropped;
  }

  /** upgrades refused because maxClients were connected */
  get refusedClients(): number {
    return this.#refused;
  }

  start(): void {
    this.#timer ??= setInterval(() => this.tick(), this.#options.snapshotIntervalMs);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    for (const c of this.#wss.clients) c.close(1001, 'kvsentinel stopping');
    await new Promise<void>((resolve) => this.#wss.close(() => resolve()));
  }

  /** Takes an HTTP upgrade for /ws. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    if (this.#wss.clients.size >= this.#options.maxClients) {
      this.#refused++;
      socket.end(
        'HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\ncontent-length: 22\r\nconnection: close\r\n\r\ntoo many live clients\n',
      );
      return;
    }
    const reportView =
      this.#report !== null && new URLSearchParams((req.url ?? '').split('?')[1] ?? '').get('view') === 'report';
    this.#wss.handleUpgrade(req, socket, head, (ws) => {
      ws.on('error', () => ws.terminate());
      this.#send(ws, { type: 'hello', ts: this.#clock(), version: this.#version });
      if (reportView) {
        this.#reportClients.add(ws);
        ws.on('close', () => this.#reportClients.delete(ws));
        const frame = this.#reportFrame();
        if (frame !== null) this.#sendText(ws, frame);
        return;
      }
      try {
        const s = this.#snapshot();
        this.#send(ws, statsFrame(s));
        // a new client learns the findings that already hold
        for (const f of findingChanges([], s.findings, s.now)) this.#send(ws, f);
      } catch (err) {
        this.#logger.error('live feed: snapshot failed', { error: String(err) });
      }
    });
  }

  /** Observations other than decisions and outcomes: those come joined, from the state's stream (show). */
  apply(o: Observation): void {
    if (o.kind === 'decision' || o.kind === 'outcome') return;
    if (o.kind === 'source-health') {
      // sources report every failure; the feed shows changes only
      if (this.#sourceUp.get(o.source) === o.up) return;
      this.#sourceUp.set(o.source, o.up);
    }
    if (this.#wss.clients.size === this.#reportClients.size) return;
    const frame = observationFrame(o);
    if (frame !== null) this.broadcast(frame);
  }

  /** A decision or outcome as the state joined it (SentinelState.subscribe). */
  show(event: JoinedEvent): void {
    if (this.#wss.clients.size === this.#reportClients.size) return;
    if (event.kind === 'decision') this.broadcast(withDecisionJoin(decisionFrame(event.observation), event.join));
    else
      this.broadcast(
        event.join === null
          ? outcomeFrame(event.observation)
          : withOutcomeJoin(outcomeFrame(event.observation), event.join),
      );
  }

  /** One snapshot: finding changes now, stats when due. */
  tick(): void {
    let s: SentinelSnapshot;
    try {
      s = this.#snapshot();
    } catch (err) {
      this.#logger.error('live feed: snapshot failed', { error: String(err) });
      return;
    }
    for (const f of findingChanges(this.#findings, s.findings, s.now)) this.broadcast(f);
    this.#findings = s.findings;
    if (s.now - this.#lastStatsAt >= this.#options.statsIntervalMs) {
      this.#lastStatsAt = s.now;
      this.broadcast(statsFrame(s));
    }
    if (this.#reportClients.size > 0 && s.now - this.#lastReportAt >= this.#options.reportIntervalMs) {
      this.#lastReportAt = s.now;
      const frame = this.#reportFrame();
      if (frame !== null) for (const ws of this.#reportClients) this.#sendText(ws, frame);
    }
  }

  /** Sends a frame to every client of the feed (not to live report pages). */
  broadcast(frame: LiveFrame): void {
    if (this.#wss.clients.size === this.#reportClients.size) return;
    const text = JSON.stringify(frame);
    for (const ws of this.#wss.clients) if (!this.#reportClients.has(ws)) this.#sendText(ws, text);
  }

  #reportFrame(): string | null {
    if (this.#report === null) return null;
    try {
      const ts = this.#clock();
      const updated = `${formatClock(ts)} ${formatZone(ts)}`;
      return JSON.stringify({ type: 'report', ts, html: this.#report(), updated } satisfies LiveFrame);
    } catch (err) {
      this.#logger.error('live feed: report rendering failed', { error: String(err) });
      return null;
    }
  }

  #send(ws: WebSocket, frame: LiveFrame): void {
    this.#sendText(ws, JSON.stringify(frame));
  }

  #sendText(ws: WebSocket, text: string): void {
    if (ws.readyState !== WebSocket.OPEN) return;
    if (ws.bufferedAmount > this.#options.maxBufferedBytes) {
      this.#dropped++;
      return;
    }
    ws.send(text);
  }
}
