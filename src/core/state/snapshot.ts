// The read side of the sidecar's one state. The exporter, the live feed, the landing page and the audit all
// read these snapshots; only the state (fed by observations) writes. Counters are cumulative since start.
import type { Finding } from '../diagnosis/finding.js';
import type { Verdict } from '../diagnosis/verdict.js';
import type { StreamOrigin } from '../stream/stream-engine.js';
import type { KvEventType } from '../wire/kv-event.js';
import type { HashCheckCounts } from './hash-check-counts.js';
import type { SidecarStats } from '../observe/sidecar-stats.js';
import type { RequestUnreadableReason } from '../relay/request-unreadable.js';

export interface RankStats {
  readonly rank: number;
  readonly eventsByType: Readonly<Record<KvEventType, number>>;
  readonly gaps: number;
  readonly missedEvents: number;
  readonly resets: number;
  readonly lastEventId: number | null;
  /** blocks held per cache level (0 = GPU, 1 = host) */
  readonly blocksByLevel: Readonly<Record<number, number>>;
}

export interface ServerStats {
  readonly server: string;
  readonly ranks: readonly RankStats[];
  readonly routerTableBlocks: number;
  readonly routerPolls: number;
  readonly eventsDeliveredToRouter: number;
  readonly eventsDroppedForConsumers: number;
  readonly hashChecks: HashCheckCounts;
  /** blocks evicted from kvsentinel's copy of the worker's table by its per-server cap */
  readonly workerTableBlocksEvicted: number;
  /** ZMQ ranks joined after more than their replay buffer held: since when their table lacks earlier blocks */
  readonly historyIncomplete: readonly {
    readonly rank: number;
    readonly since: number;
    readonly missingBatches: number;
  }[];
  /** blocks evicted from kvsentinel's replica of the router's table by its per-server cap */
  readonly routerTableBlocksEvicted: number;
  readonly requests: number;
  readonly requestFailures: number;
  /** CTX requests whose body the relay could not read (kvsentinel_relay_requests_unreadable_total, summed) */
  readonly unreadableRequests: number;
  /** the same by reason (kvsentinel_relay_requests_unreadable_total) */
  readonly unreadableByReason: Readonly<Record<RequestUnreadableReason, number>>;
  readonly promptTokens: number;
  readonly cachedTokens: number;
  readonly oracleCachedTokens: number;
  readonly predictedRouterCachedTokens: number;
  readonly inflight: number;
}

export interface DecisionStats {
  readonly oracleBest: number;
  readonly notOracleBest: number;
  readonly noPrefix: number;
  readonly followupTurns: number;
  /** follow-up turns routed back to their previous turn's server */
  readonly stickyTurns: number;
  readonly scatteredTurns: number;
  /**
   * Sums over decisions of the router's score terms as kvsentinel replicates them (score = cache term − load term):
   * the chosen server's cache term, the largest cache term any server offered (both over decisions with hashed
   * prompts), and the spread of the load term (the score's cache term minus the score, busiest − idlest server;
   * in-flight / max_batch_size in TensorRT-LLM's formula), the most load can take away (over decisions that reported
   * in-flight counts). Means are sum / count.
   */
  readonly scoreTerms: {
    readonly withKeys: number;
    readonly chosenCacheTerm: number;
    readonly bestCacheTerm: number;
    readonly withLoad: number;
    readonly loadSpread: number;
  };
}

/** What the state's bounded caches dropped, cumulative (each cache's bound is in SentinelLimits). */
export interface SentinelDropCounters {
  readonly trajectoriesEvicted: number;
  /** trajectories forgotten after `trajectoryIdleMs` without a turn (their next turn counts as a first one) */
  readonly trajectoriesExpired: number;
  readonly pendingDecisionsEvicted: number;
  readonly pendingDecisionsExpired: number;
  /** relay events awaiting delivery to the router's replica, dropped oldest */
  readonly relayEventsDropped: number;
  /** events the router received that the replica buffer no longer (or never) held; not a cache drop */
  readonly relayEventsMissed: number;
  readonly sourcesIgnored: number;
  /** outcomes whose decision was unknown (never seen, or already dropped); not a cache drop */
  readonly outcomesWithoutDecision: number;
  /** router-score / replica-prediction join entries evicted before their partner arrived */
  readonly scoreJoinsEvicted: number;
  /** trajectories whose last block keys (incremental hashing) were evicted */
  readonly incrementalKeysEvicted: number;
  /** full v2 keys evicted from the hash verifier */
  readonly v2KeysEvicted: number;
  /** observations ignored because they named a server past the state's server cap */
  readonly serverObservationsIgnored: number;
}

export interface SentinelSnapshot {
  /** time the snapshot was taken, ms */
  readonly now: number;
  readonly verdict: Verdict;
  readonly findings: readonly Finding[];
  readonly servers: readonly ServerStats[];
  readonly decisions: DecisionStats;
  /** Σ cached / Σ prompt tokens; null before any outcome */
  readonly cacheHitRatio: number | null;
  /** Σ oracle cached / Σ prompt tokens; null when unknown (watch mode without events) */
  readonly oracleHitRatio: number | null;
  readonly turnScatterRatio: number | null;
  readonly requests: number;
  readonly dropped: SentinelDropCounters;
  /** what the sidecar's relays, streams and live feed counted of themselves (the latest sidecar-stats) */
  readonly sidecar: SidecarStats;
}

/** The snapshot contract plus what the state alone knows (compatible extension of SentinelSnapshot). */
export interface SentinelStateSnapshot extends SentinelSnapshot {
  readonly window: { readonly from: number; readonly to: number } | null;
  /** (oracle − realised cached tokens) per second over the window; null without an oracle */
  readonly tokensLostPerSecond: number | null;
  readonly oracleBasis: 'worker-truth' | 'sticky-ideal' | null;
  /** the router's tokens_per_block: stated (from = the source), inferred from its routing (from = 'inferred'), or unknown */
  readonly routerTokensPerBlock: {
    readonly value: number | null;
    readonly from: string | null;
    readonly candidates: readonly number[];
  };
  /** share of follow-up turns that went back to their previous server; null before any */
  readonly stickiness: number | null;
  readonly ruleErrors: number;
  /** servers whose events came from a ZMQ stream, with the engine and how its hashes entered the tables */
  readonly eventStreams: readonly {
    readonly server: string;
    readonly engine: string;
    readonly hashes: 'native' | 'rekeyed';
    readonly vllmHashing: StreamOrigin['vllmHashing'] | null;
  }[];
}
