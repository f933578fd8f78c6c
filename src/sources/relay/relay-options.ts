// A relay's configuration and what it reports: its target, options and defaults, the dependencies the daemon hands
// it, and its cumulative counters (the exporter's).
import type { DecisionGate } from './decision-gate.js';
import type { EventBufferOptions } from '../../core/relay/event-buffer.js';
import type { ReadRetentionPool } from '../../core/relay/read-retention.js';
import type { RequestUnreadableReason } from '../../core/relay/request-unreadable.js';
import type { Clock, Logger, ObservationSink, SourceReporter } from '../ports.js';
import type { RenderPool } from '../tokenizer/render-pool.js';
import type { InflightTracker } from './inflight-tracker.js';
import type { ParseEvents } from './relay-event-path.js';
import type { RenderResult } from './router-side-ids.js';

export interface RelayTarget {
  /** server id used in observations and metric labels */
  readonly id: string;
  /** the worker's base URL, e.g. http://10.0.0.5:8001 */
  readonly upstream: string;
  readonly host: string;
  /** 0 picks a free port (tests) */
  readonly port: number;
  /** more listen ports on the same host: each is a consumer of its own (one per orchestrator replica) */
  readonly replicaPorts?: readonly number[];
}

export interface RelayOptions {
  readonly drainIntervalMs: number;
  readonly drainTimeoutMs: number;
  readonly maxDrainBytes: number;
  readonly buffer: Partial<EventBufferOptions>;
  /** lower-case header name that names a consumer; empty string disables it (then each listen port is one) */
  readonly consumerHeader: string;
  readonly captureMaxBytes: number;
  /** largest request body forwarded; a larger one is answered 413 */
  readonly maxRequestBytes: number;
  /** upstream response-headers and inter-chunk timeout for proxied requests */
  readonly proxyTimeoutMs: number;
  /**
   * how long an idle upstream connection is kept for reuse: below the worker's own idle timeout (trtllm-serve closes
   * idle keep-alive sockets after 5 s, TIMEOUT_KEEP_ALIVE), so the relay never sends on a socket being closed
   */
  readonly upstreamKeepAliveMs: number;
  /** how long stop() lets in-flight proxied requests finish */
  readonly shutdownGraceMs: number;
  /** read request bodies on a worker thread (false: on the event loop) */
  readonly scanThread: boolean;
  /**
   * drain the worker's /kv_cache_events on the interval; false for engines without that endpoint (vLLM, SGLang:
   * their events come from a ZMQ stream), where the relay only proxies and observes requests
   */
  readonly drainEvents: boolean;
}

export const DEFAULT_RELAY_OPTIONS: RelayOptions = {
  drainIntervalMs: 250,
  drainTimeoutMs: 5_000,
  maxDrainBytes: 64 * 1024 * 1024,
  buffer: {},
  consumerHeader: 'x-kvsentinel-consumer',
  captureMaxBytes: 16 * 1024 * 1024,
  maxRequestBytes: 64 * 1024 * 1024,
  proxyTimeoutMs: 600_000,
  upstreamKeepAliveMs: 4_000,
  shutdownGraceMs: 30_000,
  scanThread: true,
  drainEvents: true,
};

export interface RelayDeps {
  readonly sink: ObservationSink;
  /**
   * the server's decision gate, shared with every other source of its events (its ZMQ stream), so a request's own
   * just-stored blocks reach the tables after its decision whichever path they take; absent: the relay's own
   */
  readonly gate?: DecisionGate;
  readonly status: SourceReporter;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly inflight: InflightTracker;
  readonly parseEvents: ParseEvents;
  /**
   * the process's read-history budget, shared by its relays (the daemon's); absent: read events stay
   * retainReadMs within the relay's own byte bound
   */
  readonly readRetention?: ReadRetentionPool;
  /** proxied request durations, to the last byte (the exporter's histogram) */
  readonly onProxied?: (server: string, seconds: number) => void;
  /** a request refused without being forwarded (the exporter's counter) */
  readonly onRejected?: (server: string, reason: RelayRejectReason) => void;
  /** a CTX request whose prompt or ids could not be read (the exporter's counter) */
  readonly onUnreadable?: (server: string, reason: RequestUnreadableReason) => void;
  /** the model's tokenizer: text and chat requests get the router-side ids the router hashes (render parity) */
  readonly render?: RenderPool;
  /** a text or chat request rendered, or not (the exporter's counter) */
  readonly onRender?: (server: string, result: RenderResult, reason: string | null) => void;
}

export type RelayRejectReason = 'body_too_large';
