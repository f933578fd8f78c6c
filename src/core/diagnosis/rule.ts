// The contract between the state and the findings: the state condenses what it saw into a DiagnosisInput (plain
// numbers over the evaluation window), each rule reads it and either holds (a RuleHit) or not (null). Rules know
// nothing of tables, joins or sources; the runner knows no rule by name.
import type { RenderDiff, RenderDriftCause, RenderSide } from '../render/compare-renders.js';
import type { RequestUnreadableReason } from '../relay/request-unreadable.js';
import type { FindingId, Severity } from './finding-catalog.js';
import type { PreferenceTally } from './holder-preference.js';
import type { RouterEventRead, RouterProfile } from '../observe/observation.js';
import type { StreamEngine } from '../stream/stream-engine.js';
import type { RouterBlockSize } from './router-block-size.js';
import type { DiagnosisThresholds } from './thresholds.js';

export interface RankDiagnosis {
  readonly rank: number;
  /** the events stated attention_dp_rank (an attention-DP worker) */
  readonly stated: boolean;
  readonly events: number;
  readonly gaps: number;
  readonly missedEvents: number;
  readonly resets: number;
  readonly lastEventId: number | null;
}

export interface RouterStateView {
  readonly ts: number;
  readonly blockTableSize: number | null;
  readonly activeRequests: number | null;
  readonly polls: number | null;
  readonly pollFailures: number | null;
}

export interface ServerDiagnosis {
  readonly server: string;
  /** CTX requests routed to the server in the window */
  readonly requests: number;
  readonly outcomes: number;
  readonly failures: number;
  readonly promptTokens: number;
  readonly cachedTokens: number;
  /** drains of the worker's /kv_cache_events by the sidecar (relay / exclusive), in the window */
  readonly drains: number;
  readonly emptyDrains: number;
  /** events drained in the window, and since start */
  readonly events: number;
  readonly eventsTotal: number;
  /** a ZMQ KV-event stream of this server is subscribed */
  readonly streamed: boolean;
  /** the engine whose stream it is (its wording: vLLM/SGLang endpoints, not TensorRT-LLM's); null when none */
  readonly streamEngine: StreamEngine | null;
  /** of `events`, those that came from the ZMQ stream (the rest were drained from /kv_cache_events) */
  readonly streamEvents: number;
  /** stream batches that were missing and arrived by replay */
  readonly streamBatchesFilled: number;
  readonly storedEvents: number;
  /** event_id gaps of the pull path, or, for a stream, batch seq gaps replay did not fill */
  readonly gaps: number;
  /** events (pull) or batches (stream) those gaps lost */
  readonly missedEvents: number;
  /** of those gaps, the ones the sidecar's own lag explains (sidecar-lagging), and what they lost */
  readonly sidecarGaps: number;
  readonly sidecarMissed: number;
  /** when a drain of the pull path last brought events (null: never), and the requests served since that stored new blocks */
  readonly lastPullEventTs: number | null;
  readonly newBlockOutcomesSincePullEvent: number;
  readonly resets: number;
  readonly ranks: readonly RankDiagnosis[];
  readonly routerPolls: number;
  readonly routerPollsTotal: number;
  readonly eventsDeliveredToRouter: number;
  readonly pollFailures: number;
  readonly hashChecks: { readonly match: number; readonly mismatch: number; readonly unverifiable: number };
  /** another algorithm that reproduces mismatching root blocks, if one does */
  readonly alternativeHashAlgo: string | null;
  /** a vLLM stream's stated hashing whose blocks kvsentinel recomputes (sha256_cbor), null for other sources */
  readonly vllmHashing: { readonly algo: string; readonly seedKnown: boolean } | null;
  readonly advertisedHashAlgo: string | null;
  readonly hashAlgo: string;
  readonly advertisedBlockSize: number | null;
  readonly inferredBlockSize: number | null;
  readonly truthBlocks: number;
  /**
   * blocks a ZMQ stream stored in the window, and those whose identity covers more than their tokens (a tenant's
   * cache_salt, a LoRA name, multimodal keys): prompts reach kvsentinel without those, so it cannot key them alike
   */
  readonly streamStoredBlocks?: number;
  readonly streamScopedBlocks?: number;
  readonly replicaBlocks: number;
  /** what the worker can hold (blocks over its cache levels and ranks) and which source said so; null: unknown */
  readonly kvCapacity: { readonly blocks: number; readonly from: string } | null;
  readonly routerState: RouterStateView | null;
  /** decisions to this server whose outcome showed more cached tokens than worker truth held (by a block) */
  readonly realisedAboveOracle: number;
  /** decisions to this server with keys and an outcome (the denominator of realisedAboveOracle) */
  readonly joinedOutcomes: number;
  /** mean in-flight requests on this server at decision time, null when the source does not report it */
  readonly meanInflight: number | null;
  /** the newest router logged it skips polling this server: tokens_per_block differ (divisible) or never prepared (not) */
  readonly pollingSkipped: {
    readonly routerTokensPerBlock: number;
    readonly workerTokensPerBlock: number;
    readonly divisible: boolean;
  } | null;
  /** EVENT_MATCH_DIAG lines in the window: calls, calls with total_match > 0, with event_match > 0; last block counts */
  readonly eventMatchDiag: {
    readonly calls: number;
    readonly totalMatched: number;
    readonly eventMatched: number;
    readonly eventBlocks: number | null;
    readonly totalBlocks: number | null;
  };
  /** CTX requests to this server whose prompt or ids the relay could not read, by reason, in the window */
  readonly unreadableRequests: Readonly<Record<RequestUnreadableReason, number>>;
  /** ranks whose ZMQ stream was joined after more than the replay buffer held, until their table turned over */
  readonly historyIncomplete: readonly StreamHistoryView[];
}

/** History a stream subscription could not replay (state/stream-history.ts). */
export interface StreamHistoryView {
  readonly rank: number;
  /** when the sidecar joined: what the rank stored before is unknown */
  readonly since: number;
  readonly missingBatches: number;
  /** blocks the rank removed since, toward turning its table over */
  readonly removedSince: number;
}

export interface DecisionDiagnosis {
  /** servers the router chooses among */
  readonly serverCount: number;
  readonly decisions: number;
  /** decisions whose prompt was hashed (relay with token ids, or a bundle with keys) */
  readonly withKeys: number;
  /** decisions without ids whose oracle came from the worker's prompt_token_ids in the CTX response */
  readonly withWorkerTokens: number;
  /** decisions whose request carried text or chat messages instead of token ids */
  readonly textOrChat: number;
  readonly withOutcome: number;
  readonly predictedAnyMatch: number;
  readonly oracleAnyMatch: number;
  /** decisions whose first worker-style key is held by some server: a shared system prefix normally is */
  readonly firstBlockHeld: number;
  readonly oracleBest: number;
  readonly notOracleBest: number;
  readonly noPrefix: number;
  /** Σ over decisions with a prefix of |oracle-best servers| / N: the oracle-best count chance would give */
  readonly oracleBestByChance: number;
  /** the same when servers are picked with their observed share of requests instead of uniformly */
  readonly oracleBestByLoadShare: number;
  /** Σ share² over servers: how often a follow-up lands on its previous server by chance given the load shares (≥ 1/N) */
  readonly stickinessByLoadShare: number;
  /** chosen server had the highest predicted router score (ties included) */
  readonly agreesWithReplica: number;
  /** decisions where a server with a much larger predicted cache term lost to the chosen one on load */
  readonly sentAwayByLoad: number;
  readonly followups: number;
  readonly sticky: number;
  readonly followupsWithOutcome: number;
  readonly scattered: number;
  /**
   * scattered turns routing could have avoided, by the oracle of each turn (the one hit-rate-below-oracle sums): a
   * server held ≥ half the prompt (worker truth), or (no truth) the bounded sticky ideal reaches half of it
   */
  readonly avoidableScattered: number;
  /** Σ over those turns of oracle − realised cached tokens: what the avoidable scatter cost */
  readonly avoidableScatterLostTokens: number;
  /** Σ prompt tokens of the follow-up turns with an outcome */
  readonly followupPromptTokens: number;
  /** sticky ideal: follow-ups that left their previous server; of those, judged evicted by its capacity, or unbounded (capacity unknown) */
  readonly stickyIdealMovedTurns: number;
  readonly stickyIdealEvictedTurns: number;
  readonly stickyIdealUnboundedTurns: number;
  /** Σ over outcomes (joined to a decision or not) */
  readonly promptTokens: number;
  readonly cachedTokens: number;
  /** Σ over outcomes of decisions with keys: prompt, realised cached and oracle-best cached tokens (worker truth) */
  readonly joinedPromptTokens: number;
  readonly joinedCachedTokens: number;
  readonly joinedOracleCachedTokens: number;
  /**
   * Σ cached tokens had every follow-up gone back to its previous server (never below the realised): a turn that went
   * back counts what it reused, one that moved its previous turn unless that server's capacity had evicted it
   */
  readonly stickyIdealCachedTokens: number;
  /** prompt tokens of the outcomes counted in stickyIdealCachedTokens */
  readonly stickyIdealPromptTokens: number;
  readonly predictedCachedTokens: number;
  /** mean over decisions of the largest in-flight count across servers; null when not reported */
  readonly meanMaxInflight: number | null;
  /** decisions that reported in-flight counts per server */
  readonly inflightReports: number;
  /** … where (busiest − idlest) / max_batch_size reached sentAwayCacheDelta: the load term alone outweighs that much cache */
  readonly loadSpreadOverCacheDelta: number;
  readonly peakInflight: number | null;
  readonly realisedAboveOracle: number;
  readonly joinedOutcomes: number;
  /**
   * the behavioural test of holder-preference.ts: informative decisions where the holder is the oracle-best server
   * (worker truth) or the trajectory's previous server (turn), split into away / tie decisions
   */
  readonly preference: {
    readonly truth: { readonly away: PreferenceTally; readonly tie: PreferenceTally };
    readonly turn: { readonly away: PreferenceTally; readonly tie: PreferenceTally };
  };
  /** the largest share of decisions one server took in the window (0 without decisions) */
  readonly topServerShare: number;
  /** the server that took it (null without decisions) */
  readonly topServer: string | null;
}

export interface RouterScoreDiagnosis {
  /** decisions reported by the router debug endpoint */
  readonly decisions: number;
  readonly anyMatch: number;
  readonly sentAwayByLoad: number;
  /** decisions the debug endpoint reported where our replica predicted a match on some server */
  readonly replicaPredictedMatch: number;
  /** … and the router itself reported no match anywhere */
  readonly replicaMatchRouterNone: number;
}

export interface SourceDiagnosis {
  readonly source: string;
  readonly up: boolean;
  readonly error: string | null;
  /** since when the source has been down, ms; null when up */
  readonly downSince: number | null;
  /** last failed read, ms */
  readonly lastFailure: number | null;
  readonly failures: number;
}

export interface RouterDiagnosis {
  readonly type: string | null;
  readonly source: string | null;
  /** the router's chunk size: stated by a source, or inferred from its routing; null while unknown */
  readonly blockSize: RouterBlockSize | null;
  /** while blockSize is unknown: the chunk sizes the router may use (32 and the worker block sizes), else [] */
  readonly tokensPerBlockCandidates: readonly number[];
  readonly maxBatchSize: number | null;
  readonly backfillBlockHashesOnFinish: boolean | null;
  /** false for routers that never read KV events (conversation, round_robin, load_balancing) */
  readonly consumesEvents: boolean;
  /**
   * where the router reads KV events (pull endpoint, ZMQ streams, none) and how that is known ('stated' by the
   * configuration, its 'router type', 'its polls', 'the event path' its workers serve); null while unknown
   */
  readonly readsEvents: RouterEventRead | null;
  readonly readsEventsFrom: 'stated' | 'router type' | 'its polls' | 'the event path' | null;
  /** which router.py runs ('2026-06' | 'newest'), and the source that said so; null while unknown */
  readonly profile: RouterProfile | null;
  readonly profileFrom: string | null;
  /** newest: routed-block tracking (default on); 2026-06: false; null while the profile is unknown */
  readonly trackRoutedBlocks: boolean | null;
  /** newest: load_weight (default 0.25); null otherwise */
  readonly loadWeight: number | null;
  readonly loadCap: number | null;
  /** the router inserts its own hashes on finish (backfill or routed-block tracking); null while unknown */
  readonly fillsOwnTable: boolean | null;
}

export interface RenderDriftSample {
  readonly ts: number;
  readonly server: string;
  readonly diff: RenderDiff;
}

export interface RenderCauseCount {
  readonly cause: RenderDriftCause;
  readonly side: RenderSide | null;
  readonly requests: number;
}

export interface RenderDiagnosis {
  /** requests whose router-side ids were compared with the worker's */
  readonly compared: number;
  /** … of which the router-side ids came from kvsentinel's render (the rest were carried by the request) */
  readonly rendered: number;
  readonly differing: number;
  /** differing requests where less than half of the router's hashed tokens can still match */
  readonly breaking: number;
  /** differing requests where nothing can match: the difference falls in the router's first block */
  readonly firstBlock: number;
  /** most frequent first */
  readonly causes: readonly RenderCauseCount[];
  /** the CTX servers whose requests differed in the window, sorted */
  readonly differingServers: readonly string[];
  /** the smallest first diverging position in the window */
  readonly minPosition: number | null;
  /** the most recent difference in the window */
  readonly sample: RenderDriftSample | null;
}

/** kvsentinel's own lag over the window (sidecar-load observations): an event loop running late or saturated */
export interface SidecarDiagnosis {
  /** lagging intervals (about a second each) and their total length */
  readonly lagIntervals: number;
  readonly laggingMs: number;
  readonly worstEventLoopDelayMs: number;
  readonly worstUtilization: number;
  /** the last load report was a lagging one */
  readonly laggingNow: boolean;
  /** the newest lagging interval's end, or null */
  readonly lastLagEnd: number | null;
  /**
   * the longest a ZMQ subscriber's socket had held a backlog when one of its gaps showed (0: none): it took batches
   * slower than they came, with its loop on time, so its high-water mark dropped them
   */
  readonly worstBacklogMs: number;
}

export interface DiagnosisInput {
  readonly now: number;
  readonly sidecar: SidecarDiagnosis;
  /** time span of the data the rules read */
  readonly window: { readonly from: number; readonly to: number } | null;
  readonly thresholds: DiagnosisThresholds;
  readonly router: RouterDiagnosis;
  /** the sidecar drains worker events (relay or exclusive mode) */
  readonly seesWorkerEvents: boolean;
  /** the sidecar sees the router's polls (relay mode) */
  readonly seesRouterPolls: boolean;
  /**
   * the router reads the pull endpoint (stated, or by its type, its polls or the workers' event path), so polls
   * absent from the relay mean something; never from the sidecar's own mode
   */
  readonly routerPollsExpected: boolean;
  /** a router debug endpoint reports state or scores */
  readonly seesRouterDebug: boolean;
  readonly servers: readonly ServerDiagnosis[];
  readonly decisions: DecisionDiagnosis;
  readonly routerScores: RouterScoreDiagnosis;
  /** router-side ids against the workers' prompt_token_ids (render parity) */
  readonly render: RenderDiagnosis;
  readonly sources: readonly SourceDiagnosis[];
}

export interface RuleHit {
  readonly servers: readonly string[];
  readonly summary: string;
  readonly evidence: Readonly<Record<string, number | string | boolean>>;
  /** the cause in docs/trtllm-wire.md §7 it points to */
  readonly cause: string;
  /** exact configuration keys and values */
  readonly fix: string;
  /** below the catalog's severity for findings that grade their hits (render-drift); absent: the catalog's */
  readonly severity?: Severity;
}

export interface Rule {
  readonly id: FindingId;
  evaluate(input: DiagnosisInput): RuleHit | null;
}
