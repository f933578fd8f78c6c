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

/**
 * The published router.py versions users run (docs/trtllm-wire.md §1.4, §5): '2026-06' scores
 * matched/padded − active/max_batch_size (tokens_per_block 32 unless set, backfill opt-in); 'newest' scores
 * matches/tokens_per_block − load_weight·active among servers under load_cap, adopts the worker's tokens_per_block
 * when unset, tracks routed blocks by default and pins conversations.
 */
export type RouterProfile = '2026-06' | 'newest';

export const ROUTER_PROFILES: readonly RouterProfile[] = ['2026-06', 'newest'];

/** Per-server facts the newest router logs: event polling skipped by design, and its EVENT_MATCH_DIAG counters. */
export type RouterServerFactObservation =
  | {
      readonly kind: 'router-server-fact';
      readonly ts: number;
      readonly server: string;
      readonly fact: 'polling-skipped';
      readonly routerTokensPerBlock: number;
      readonly workerTokensPerBlock: number;
      /** false: the sizes do not divide, so the router never prepares the server (RuntimeError) */
      readonly divisible: boolean;
    }
  | {
      readonly kind: 'router-server-fact';
      readonly ts: number;
      readonly server: string;
      readonly fact: 'event-match';
      /** tokens the router matched for one query, and of those the ones from event-fed blocks */
      readonly totalMatch: number;
      readonly eventMatch: number;
      readonly eventBlocks: number;
      readonly totalBlocks: number;
    };

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
  /** which router.py the orchestrator runs, when a source says (absent = not stated) */
  readonly profile?: RouterProfile | null;
  /** newest: the router adds the hashes it routed on a successful finish (default on) */
  readonly trackRoutedBlocks?: boolean | null;
  readonly loadWeight?: number | null;
  /** newest: servers whose active/max_batch_size reaches it are left out (default ∞) */
  readonly loadCap?: number | null;
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
  | SourceHealthObservation
  | RouterServerFactObservation;

export type ObservationKind = Observation['kind'];
