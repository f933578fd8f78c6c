// What the sidecar observes, from any vantage point (relay, watch sources, the simulator's virtual-time driver,
// a recorded bundle). Every source turns its input into these; joins and findings read only these.
// Times are milliseconds since the Unix epoch (or since the start of a virtual-time run).
import type { PromptForm, RequestUnreadableReason } from '../relay/request-unreadable.js';
import type { RenderDiff } from '../render/compare-renders.js';
import type { HashCheck } from '../state/hash-verifier.js';
import type { StreamOrigin } from '../stream/stream-engine.js';
import type { HashAlgo, KvEvent } from '../wire/kv-event.js';
import type { SidecarStats } from './sidecar-stats.js';

/** What every observation carries: what it is and when it was made. */
interface ObservationHead<K extends string> {
  readonly kind: K;
  readonly ts: number;
}

/** An observation about one server (its id as the source names it). */
interface ServerObservationHead<K extends string> extends ObservationHead<K> {
  readonly server: string;
}

/**
 * Events drained from a CTX worker's `/kv_cache_events` by the sidecar (relay or exclusive mode), in order; or, with
 * `stream`, one batch a worker published over ZMQ (a subscriber steals nothing: no relay buffer, no router poll).
 */
export interface WorkerEventsObservation extends ServerObservationHead<'worker-events'> {
  /** relay sequence number of events[0]; consecutive per server, never reused (not the worker's event_id); 0 for streams */
  readonly firstSeq: number;
  readonly events: readonly KvEvent[];
  /** set when the events came from a ZMQ stream */
  readonly stream?: StreamOrigin;
  /**
   * re-keyed streams whose engine hashes the source recomputed before re-keying (vLLM sha256_cbor): one entry per
   * event, the checks of a stored event's blocks, null for the others. A bundle keeps them as the line's digest.
   */
  readonly engineChecks?: readonly (readonly HashCheck[] | null)[];
}

/**
 * What a ZMQ KV-event stream's batch sequence showed for one rank: `subscribed` when the sidecar starts listening,
 * `gap` when batches never arrived (`lost`; `filled` arrived by replay), `reset` when a new publisher life began
 * (the seq went back, vLLM's publisher id changed, or a reconnection found another life: that rank's tables start
 * over), `history-incomplete` when the sidecar joined after more than the publisher's replay buffer holds (`lost`
 * earlier batches nobody can replay: the table lacks what they stored until it has turned over).
 */
export const STREAM_SEQUENCE_CHANGES = ['subscribed', 'gap', 'reset', 'history-incomplete'] as const;
export type StreamSequenceChange = (typeof STREAM_SEQUENCE_CHANGES)[number];

export interface StreamSequenceObservation extends ServerObservationHead<'stream-sequence'> {
  /** the rank whose publisher this is (0 on a worker without attention DP) */
  readonly rank: number;
  readonly change: StreamSequenceChange;
  readonly lost: number;
  readonly filled: number;
  /**
   * on a gap: how long this subscriber's socket had held a backlog (its queue never found empty) when the gap showed,
   * so the batches were dropped at its own high-water mark; absent: it was keeping up
   */
  readonly subscriberBehindMs?: number;
}

/** A consumer (the router) polled the relay for a server and received relay events [fromSeq, toSeq). */
export interface RouterPollObservation extends ServerObservationHead<'router-poll'> {
  readonly consumer: string;
  readonly fromSeq: number;
  readonly toSeq: number;
  /** events lost for this consumer because its backlog overflowed (drop-oldest) */
  readonly dropped: number;
}

/** One CTX request as the router sent it (relay sees it on the wire; request logs or the debug endpoint report it). */
export interface DecisionObservation extends ObservationHead<'decision'> {
  readonly requestId: string;
  /** trajectory / conversation id (X-Correlation-ID, conversation_id, x-session-id …) */
  readonly correlationId: string | null;
  /** the CTX server chosen by the router */
  readonly server: string;
  /**
   * prompt token ids as the router hashes them: carried by the request, or kvsentinel's own render of a text or chat
   * request with the model's tokenizer (promptTokensFrom 'tokenizer'); held in memory only, never exported
   */
  readonly promptTokens: Uint32Array | null;
  /**
   * 'tokenizer': promptTokens are kvsentinel's render of what the router hashes, not the worker's ids, so the
   * oracle waits for the worker's own ids (outcome.workerPromptTokens); absent: 'request'
   */
  readonly promptTokensFrom?: 'request' | 'tokenizer';
  readonly promptTokenCount: number | null;
  /**
   * the prompt in the worker's KV blocks, when that is how the source counts it (a perf-metrics request log's
   * num_total_allocated_blocks): the state turns it into promptTokenCount with the server's block size as it knows
   * it then, and applies the decision in tokens; absent/null: promptTokenCount says it
   */
  readonly promptBlocks?: number | null;
  /**
   * promptFingerprints(promptTokens) (state/incremental-keys.ts), when the relay computed them off its event loop
   * where it read the prompt; the digest computes them itself otherwise. In memory only, never exported.
   */
  readonly promptFingerprints?: Uint32Array;
  /** in-flight CTX requests per server just before this one was sent (relay knows them) */
  readonly inflight: Readonly<Record<string, number>> | null;
  /** how the request carried its prompt (token ids, text, chat messages); absent/null when not known */
  readonly promptForm?: PromptForm | null;
  /** the relay could not read the prompt or ids of this request, and why; absent/null when it could */
  readonly unreadable?: RequestUnreadableReason | null;
}

/** The CTX server's answer to a decision. */
export interface OutcomeObservation extends ServerObservationHead<'outcome'> {
  readonly requestId: string;
  readonly ok: boolean;
  readonly promptTokens: number | null;
  readonly cachedTokens: number | null;
  /**
   * prompt and reused blocks in the worker's KV blocks, when that is how the source counts them (a perf-metrics
   * request log): the state turns them into promptTokens and cachedTokens as for DecisionObservation.promptBlocks
   */
  readonly promptBlocks?: number | null;
  readonly cachedBlocks?: number | null;
  readonly latencyMs: number | null;
  /**
   * The worker's own token ids of the prompt, from the CTX response (`prompt_token_ids`, first list of several, or
   * `prompt_token_ids_b64`) or a request log: worker truth for text and chat requests, and what render-drift checks
   * compare the router's ids with. Held in memory only, never exported; absent/null when the response had none.
   */
  readonly workerPromptTokens?: Uint32Array | null;
}

/**
 * Render parity of one CTX request: the token ids the router hashes (kvsentinel's render with the model's tokenizer
 * and chat template, or the ids the request carried) against the `prompt_token_ids` the worker returned.
 */
export interface RenderCheckObservation extends ServerObservationHead<'render-check'> {
  readonly requestId: string;
  /** where the router-side ids came from */
  readonly routerIds: 'tokenizer' | 'request';
  /** router-side prompt length */
  readonly promptTokens: number;
  /** null: the same ids. Its windows are token ids: evidence, never exported to the live feed */
  readonly diff: RenderDiff | null;
}

/** `/server_info` of a CTX worker, or what the operator's configuration states of it. */
export interface ServerInfoObservation extends ServerObservationHead<'server-info'> {
  readonly hashAlgo: HashAlgo | null;
  readonly tokensPerBlock: number | null;
  /** KV capacity in blocks (every cache level and rank) as the configuration states it (`kv_capacity_blocks`); absent/null: not stated */
  readonly kvCapacityBlocks?: number | null;
}

/**
 * The published router.py versions users run (docs/trtllm-wire.md §1.4, §5): '2026-06' scores
 * matched/padded − active/max_batch_size (tokens_per_block 32 unless set, backfill opt-in); 'newest' scores
 * matches/tokens_per_block − load_weight·active among servers under load_cap, adopts the worker's tokens_per_block
 * when unset, tracks routed blocks by default and pins conversations.
 */
export type RouterProfile = '2026-06' | 'newest';

export const ROUTER_PROFILES: readonly RouterProfile[] = ['2026-06', 'newest'];

/**
 * Where the router reads KV events from (docs/orchestrator-log.md, "router kinds"): TensorRT-LLM's
 * KvCacheAwareRouter polls the workers' pull endpoint, a vLLM/SGLang-side router subscribes to their ZMQ streams,
 * and ConversationRouter, round-robin and load-balancing routers read none. Stated by the operator, or learned from
 * the router's type or its polls; never from the sidecar's own transport.
 */
export type RouterEventRead = 'pull' | 'stream' | 'none';

export const ROUTER_EVENT_READS: readonly RouterEventRead[] = ['pull', 'stream', 'none'];

/** TensorRT-LLM's router types, in router.py create_router's order (the simulator runs each of them) */
export const ROUTER_TYPE_NAMES = ['round_robin', 'load_balancing', 'kv_cache_aware', 'conversation'] as const;
export type RouterTypeName = (typeof ROUTER_TYPE_NAMES)[number];

/** Per-server facts the newest router logs: event polling skipped by design, and its EVENT_MATCH_DIAG counters. */
export type RouterServerFactObservation =
  | (ServerObservationHead<'router-server-fact'> & {
      readonly fact: 'polling-skipped';
      readonly routerTokensPerBlock: number;
      readonly workerTokensPerBlock: number;
      /** false: the sizes do not divide, so the router never prepares the server (RuntimeError) */
      readonly divisible: boolean;
    })
  | (ServerObservationHead<'router-server-fact'> & {
      readonly fact: 'event-match';
      /** tokens the router matched for one query, and of those the ones from event-fed blocks */
      readonly totalMatch: number;
      readonly eventMatch: number;
      readonly eventBlocks: number;
      readonly totalBlocks: number;
    });

/** Router settings learned from the debug endpoint, the orchestrator log or the operator's config. */
export interface RouterConfigObservation extends ObservationHead<'router-config'> {
  readonly source: 'debug-endpoint' | 'orchestrator-log' | 'config' | 'simulator';
  readonly routerType: string | null;
  readonly tokensPerBlock: number | null;
  /** the router logged it adopted tokensPerBlock from a worker (the newest router, unset); absent: stated as its own */
  readonly tokensPerBlockAdopted?: boolean;
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
  /** where the router reads KV events from, when a source says (absent = not stated) */
  readonly readsEvents?: RouterEventRead | null;
}

/** Per-server router state from the router debug endpoint (docs/design.md §8). */
export interface RouterStateObservation extends ServerObservationHead<'router-state'> {
  readonly activeRequests: number | null;
  readonly hashAlgo: HashAlgo | null;
  readonly blockTableSize: number | null;
  readonly polls: number | null;
  readonly pollFailures: number | null;
}

/** A router decision with its candidates' scores, from the router debug endpoint. */
export interface RouterScoreObservation extends ObservationHead<'router-score'> {
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
export interface PollFailureObservation extends ServerObservationHead<'poll-failure'> {
  readonly message: string;
}

/** Health of one configured source (a relay upstream, a poller, a log follower). */
export interface SourceHealthObservation extends ObservationHead<'source-health'> {
  readonly source: string;
  readonly up: boolean;
  readonly error: string | null;
}

/**
 * The sidecar's own load over the last interval (about a second): how late its event loop ran and how busy it was.
 * What it loses while behind (a ZMQ socket past its high-water mark, a drain or replay that timed out) is its own
 * loss, not the deployment's: the state attributes gaps seen while it lags to the sidecar.
 */
export interface SidecarLoadObservation extends ObservationHead<'sidecar-load'> {
  /** the interval's length, ms */
  readonly intervalMs: number;
  /** 99th percentile of the event loop's delay over the interval, ms */
  readonly eventLoopDelayMs: number;
  /** share of the interval the event loop was busy, 0..1 */
  readonly utilization: number;
}

/**
 * What the sidecar's relays, streams, forwarding sockets and live feed have counted so far, cumulative (the daemon
 * observes it on its evaluation clock, before each scrape and once at stop); each replaces the previous whole.
 */
export interface SidecarStatsObservation extends ObservationHead<'sidecar-stats'>, SidecarStats {}

export type Observation =
  | WorkerEventsObservation
  | SidecarLoadObservation
  | SidecarStatsObservation
  | StreamSequenceObservation
  | RouterPollObservation
  | DecisionObservation
  | OutcomeObservation
  | RenderCheckObservation
  | ServerInfoObservation
  | RouterConfigObservation
  | RouterStateObservation
  | RouterScoreObservation
  | PollFailureObservation
  | SourceHealthObservation
  | RouterServerFactObservation;

export type ObservationKind = Observation['kind'];
