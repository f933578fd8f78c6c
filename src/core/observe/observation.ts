// What the sidecar observes, from any vantage point (relay, watch sources, the simulator's virtual-time driver,
// a recorded bundle). Every source turns its input into these; joins and findings read only these.
// Times are milliseconds since the Unix epoch (or since the start of a virtual-time run).
import type { HashAlgo, KvEvent } from '../wire/kv-event.js';

/** Events drained from a CTX worker's `/kv_cache_events` by the sidecar (relay or exclusive mode), in order. */
export interface WorkerEventsObservation {
  readonly kind: 'worker-events';
  readonly ts: number;
  readonly server: string;
  /** relay sequence number of events[0]; consecutive per server, never reused (not the worker's event_id) */
  readonly firstSeq: number;
  readonly events: readonly KvEvent[];
}

/** A consumer (the router) polled the relay for a server and received relay events [fromSeq, toSeq). */
export interface RouterPollObservation {
  readonly kind: 'router-poll';
  readonly ts: number;
  readonly server: string;
  readonly consumer: string;
  readonly fromSeq: number;
  readonly toSeq: number;
  /** events lost for this consumer because its backlog overflowed (drop-oldest) */
  readonly dropped: number;
}

/** One CTX request as the router sent it (relay sees it on the wire; request logs or the debug endpoint report it). */
export interface DecisionObservation {
  readonly kind: 'decision';
  readonly ts: number;
  readonly requestId: string;
  /** trajectory / conversation id (X-Correlation-ID, conversation_id, x-session-id …) */
  readonly correlationId: string | null;
  /** the CTX server chosen by the router */
  readonly server: string;
  /** prompt token ids when the request carried them; held in memory only, never exported */
  readonly promptTokens: Uint32Array | null;
  readonly promptTokenCount: number | null;
  /** in-flight CTX requests per server just before this one was sent (relay knows them) */
  readonly inflight: Readonly<Record<string, number>> | null;
}

/** The CTX server's answer to a decision. */
export interface OutcomeObservation {
  readonly kind: 'outcome';
  readonly ts: number;
  readonly requestId: string;
  readonly server: string;
  readonly ok: boolean;
  readonly promptTokens: number | null;
  readonly cachedTokens: number | null;
  readonly latencyMs: number | null;
}

/** `/server_info` of a CTX worker. */
export interface ServerInfoObservation {
  readonly kind: 'server-info';
  readonly ts: number;
  readonly server: string;
  readonly hashAlgo: HashAlgo | null;
  readonly tokensPerBlock: number | null;
}

/** Router settings learned from the debug endpoint, the orchestrator log or the operator's config. */
export interface RouterConfigObservation {
  readonly kind: 'router-config';
  readonly ts: number;
  readonly source: 'debug-endpoint' | 'orchestrator-log' | 'config' | 'simulator';
  readonly routerType: string | null;
  readonly tokensPerBlock: number | null;
  readonly maxBatchSize: number | null;
  readonly backfillBlockHashesOnFinish: boolean | null;
  /** the CTX servers the router routes to, by the ids the sidecar uses */
  readonly servers: readonly string[] | null;
}

/** Per-server router state from the router debug endpoint (docs/design.md §8). */
export interface RouterStateObservation {
  readonly kind: 'router-state';
  readonly ts: number;
  readonly server: string;
  readonly activeRequests: number | null;
  readonly hashAlgo: HashAlgo | null;
  readonly blockTableSize: number | null;
  readonly polls: number | null;
  readonly pollFailures: number | null;
}

/** A router decision with its candidates' scores, from the router debug endpoint. */
export interface RouterScoreObservation {
  readonly kind: 'router-score';
  readonly ts: number;
  readonly seq: number;
  readonly requestId: string;
  readonly correlationId: string | null;
  readonly chosen: string;
  readonly candidates: readonly {
    readonly server: string;
    readonly matchedTokens: number;
    readonly activeRequests: number;
    readonly score: number;
  }[];
}

/** The orchestrator logged a failed poll of a server's events. */
export interface PollFailureObservation {
  readonly kind: 'poll-failure';
  readonly ts: number;
  readonly server: string;
  readonly message: string;
}

/** Health of one configured source (a relay upstream, a poller, a log follower). */
export interface SourceHealthObservation {
  readonly kind: 'source-health';
  readonly ts: number;
  readonly source: string;
  readonly up: boolean;
  readonly error: string | null;
}

export type Observation =
  | WorkerEventsObservation
  | RouterPollObservation
  | DecisionObservation
  | OutcomeObservation
  | ServerInfoObservation
  | RouterConfigObservation
  | RouterStateObservation
  | RouterScoreObservation
  | PollFailureObservation
  | SourceHealthObservation;

export type ObservationKind = Observation['kind'];
