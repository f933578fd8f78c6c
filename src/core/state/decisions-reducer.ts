// Routing decisions into the state: per-trajectory turn tracking, load at decision time, the join with both tables
// (decision-join.ts), the behavioural holder-preference test, and the router debug endpoint's own scores joined with
// our replica's predictions. A decision waits (bounded, with a TTL) for its outcome (outcomes-reducer.ts).
import { classifyPreference, type PreferenceSample } from '../diagnosis/holder-preference.js';
import type { DecisionObservation, RouterScoreObservation } from '../observe/observation.js';
import type { HashAlgo } from '../wire/kv-event.js';
import { counterKeys, type KeptBy } from './counter-key.js';
import { joinDecision } from './decision-join.js';
import type { DecisionJoin, JoinCandidate } from './joined-events.js';
import { LruMap } from './lru-map.js';
import { DEFAULT_ROUTER_MAX_BATCH_SIZE } from '../diagnosis/router-defaults.js';
import { keysAtBlockSize, type DecisionKeys } from './observation-digester.js';
import type { StateModel } from './state-model.js';

/** The counters of the decisions (the join's own are in decision-join.ts), grouped by the labels they are kept by (counter-key.ts). */
export type DecisionCounters = KeptBy<
  ['server'],
  'requests' | 'inflightSum' | 'inflightReports' | 'predictedRouterCachedTokens'
> &
  KeptBy<['server', 'reason'], 'unreadableRequests'> &
  KeptBy<
    [],
    | 'textOrChat'
    | 'maxInflightSum'
    | 'maxInflightReports'
    | 'loadSpreadOverCacheDelta'
    | 'peakInflight'
    | 'followups'
    | 'sticky'
    | 'routerScores'
    | 'routerScoresAnyMatch'
    | 'routerScoresSentAwayByLoad'
    | 'replicaPredictedMatch'
    | 'replicaMatchRouterNone'
  > &
  KeptBy<['holder', 'set'], 'preferenceDecisions' | 'preferenceHolderChosen' | 'preferenceBlindExpected'>;

const counterKey = counterKeys<DecisionCounters>();

export interface PendingDecision {
  readonly ts: number;
  readonly server: string;
  readonly correlationId: string | null;
  /** the request carried no token count (text, chat, unreadable): the outcome's usage gives the trajectory's */
  readonly countFromOutcome: boolean;
  readonly followup: boolean;
  /** went back to the previous turn's server (null for first turns) */
  readonly sticky: boolean | null;
  readonly prevPromptTokens: number | null;
  /** the previous turn's server, and what that server had stored by the previous turn's outcome (tokens) */
  readonly prevServer: string | null;
  readonly prevAllocatedTokens: number | null;
  readonly hasKeys: boolean;
  readonly oracleBestTokens: number;
  readonly oracleChosenTokens: number;
  readonly blockSize: number;
  /** router keys for backfill-on-finish (one chain per candidate chunk size), kept only when the router backfills */
  readonly backfillKeys: readonly BigUint64Array[] | null;
  readonly backfillAlgo: HashAlgo;
}

export interface Trajectory {
  lastServer: string;
  /** the last turn's decision time, ms */
  lastTs: number;
  lastPromptTokens: number | null;
  /** tokens lastServer had stored when this trajectory's last turn there was served (null until it was) */
  lastAllocatedTokens: number | null;
  turns: number;
}

/** What the projections read of the decisions beyond their counters. */
export interface DecisionsView {
  /** servers the router chooses among: those it lists, or those decisions chose */
  serverCount(): number;
  /** the router chunk sizes the last decision considered while the router's was unknown (none yet: empty) */
  readonly tokensPerBlockCandidates: readonly number[];
  /** in-flight requests at the latest decision that reported the server's */
  inflightOf(server: string): number;
}

export class DecisionsReducer implements DecisionsView {
  readonly trajectories: LruMap<string, Trajectory>;
  readonly pending: LruMap<string, PendingDecision>;
  /** requestId → our replica predicted a match somewhere / the router reported one (joins router-score) */
  readonly #predictions: LruMap<string, boolean>;
  readonly #reportedScores: LruMap<string, boolean>;
  #pendingExpired = 0;
  #trajectoriesExpired = 0;
  /** servers chosen by a decision */
  readonly #servers = new Set<string>();
  #tpbCandidates: readonly number[] = [];
  readonly #inflight = new Map<string, number>();

  readonly model: StateModel;

  constructor(model: StateModel) {
    this.model = model;
    this.trajectories = new LruMap(model.limits.trajectories);
    this.pending = new LruMap(model.limits.pendingDecisions);
    this.#predictions = new LruMap(model.limits.pendingDecisions);
    this.#reportedScores = new LruMap(model.limits.pendingDecisions);
  }

  serverCount(): number {
    const listed = this.model.deployment.router.servers?.length ?? 0;
    return Math.max(listed, this.#servers.size);
  }

  get tokensPerBlockCandidates(): readonly number[] {
    return this.#tpbCandidates;
  }

  inflightOf(server: string): number {
    return this.#inflight.get(server) ?? 0;
  }

  /** trajectories forgotten idle (not losses: their next turn counts as a first one) */
  get trajectoriesExpired(): number {
    return this.#trajectoriesExpired;
  }

  get pendingExpired(): number {
    return this.#pendingExpired;
  }

  /** score-join entries evicted before their partner arrived */
  get scoreJoinsEvicted(): number {
    return this.#predictions.dropped + this.#reportedScores.dropped;
  }

  /** Drops decisions that waited longer than the TTL for their outcome. */
  expirePending(now: number): void {
    const limit = now - this.model.limits.pendingTtlMs;
    this.#pendingExpired += this.pending.deleteOldestWhile((d) => d.ts < limit);
  }

  /**
   * Forgets the trajectories idle past the limit, least recently seen first (they ended, or their next turn will
   * count as a first one): counted apart from the cap's evictions, which are losses.
   */
  #forgetIdleTrajectories(now: number): void {
    this.#trajectoriesExpired += this.trajectories.deleteOldestWhile((t) => this.#idle(t, now));
  }

  #idle(trajectory: Trajectory, now: number): boolean {
    return now - trajectory.lastTs > this.model.limits.trajectoryIdleMs;
  }

  /** Applies a decision; returns its join when `withJoin` (someone listens), else null. */
  decision(obs: DecisionObservation, keys: DecisionKeys | null, withJoin: boolean): DecisionJoin | null {
    const m = this.model;
    const c = m.counters;
    const { server, ts } = obs;
    this.#servers.add(server);
    c.add(ts, counterKey('requests', server));
    if (obs.unreadable !== undefined && obs.unreadable !== null)
      c.add(ts, counterKey('unreadableRequests', server, obs.unreadable));
    if (obs.promptForm === 'text' || obs.promptForm === 'chat') c.add(ts, counterKey('textOrChat'));
    if (obs.inflight !== null) this.#load(ts, obs.inflight);

    // per-trajectory turn tracking
    let followup = false;
    let sticky: boolean | null = null;
    let prevPromptTokens: number | null = null;
    let prevServer: string | null = null;
    let prevAllocatedTokens: number | null = null;
    if (obs.correlationId !== null) {
      this.#forgetIdleTrajectories(ts);
      const traj = this.trajectories.get(obs.correlationId);
      if (traj !== undefined && !this.#idle(traj, ts)) {
        followup = true;
        prevPromptTokens = traj.lastPromptTokens;
        prevServer = traj.lastServer;
        prevAllocatedTokens = traj.lastAllocatedTokens;
        traj.lastAllocatedTokens = null;
        c.add(ts, counterKey('followups'));
        sticky = traj.lastServer === server;
        if (sticky) c.add(ts, counterKey('sticky'));
        traj.lastServer = server;
        traj.lastTs = ts;
        traj.turns++;
        traj.lastPromptTokens = obs.promptTokenCount ?? traj.lastPromptTokens;
      } else {
        if (traj !== undefined) this.#trajectoriesExpired++; // idle by its own clock, though seen after newer ones
        this.trajectories.set(obs.correlationId, {
          lastServer: server,
          lastTs: ts,
          lastPromptTokens: obs.promptTokenCount,
          lastAllocatedTokens: null,
          turns: 1,
        });
      }
    }

    let oracleBestTokens = 0;
    let oracleChosenTokens = 0;
    let blockSize = m.deployment.blockSizeOf(server) ?? 0;
    let backfillKeys: BigUint64Array[] | null = null;
    const backfillAlgo = m.deployment.hashAlgoOf(server);
    let candidates: readonly JoinCandidate[] = [];
    let oracleBest: string[] = [];
    // router-side ids from kvsentinel's render predict the router; the oracle is the worker's, from its own ids
    const oracleDeferred = obs.promptTokensFrom === 'tokenizer';
    if (keys !== null) {
      const joined = joinDecision(m, obs, keys, !oracleDeferred, withJoin);
      candidates = joined.candidates;
      oracleBest = joined.oracleBestServers;
      oracleBestTokens = joined.oracleBest;
      oracleChosenTokens = joined.oracleChosen;
      blockSize = joined.blockSize;
      if (!joined.routerTokensPerBlockKnown) this.#tpbCandidates = joined.routerTokensPerBlock;
      c.add(ts, counterKey('predictedRouterCachedTokens', server), joined.predictedChosen);
      this.#predictions.set(obs.requestId, joined.predictedAny);
      const reported = this.#reportedScores.peek(obs.requestId);
      if (reported !== undefined) this.#joinScore(ts, joined.predictedAny, reported);
      if (m.fillsOwnTable() === true) {
        // the router backfills (or tracks) its own keys; with its chunk size unknown, those of every candidate (they never collide)
        backfillKeys = joined.routerTokensPerBlock
          .map((tpb) => keysAtBlockSize(keys, tpb, backfillAlgo))
          .filter((k) => k !== undefined);
      }
    }
    const serverCount = this.serverCount();
    this.#countPreference(ts, 'truth', classifyPreference(server, oracleBest, obs.inflight, serverCount));
    if (prevServer !== null)
      this.#countPreference(ts, 'turn', classifyPreference(server, [prevServer], obs.inflight, serverCount));
    this.pending.set(obs.requestId, {
      ts,
      server,
      correlationId: obs.correlationId,
      countFromOutcome: obs.promptTokenCount === null,
      followup,
      sticky,
      prevPromptTokens,
      prevServer,
      prevAllocatedTokens,
      hasKeys: keys !== null && !oracleDeferred,
      oracleBestTokens,
      oracleChosenTokens,
      blockSize,
      backfillKeys,
      backfillAlgo,
    });
    if (!withJoin) return null;
    return {
      ts,
      requestId: obs.requestId,
      correlationId: obs.correlationId,
      server,
      followup,
      sticky,
      hashedTokens: keys?.hashedTokens ?? null,
      candidates,
      oracleBest,
      chosenIsOracleBest: keys === null || oracleBest.length === 0 ? null : oracleBest.includes(server),
    };
  }

  /** The router debug endpoint's scores of one decision, joined with our replica's prediction of it. */
  routerScore(obs: RouterScoreObservation): void {
    const m = this.model;
    const c = m.counters;
    c.add(obs.ts, counterKey('routerScores'));
    const anyMatch = obs.candidates.some((x) => x.matchedTokens > 0);
    if (anyMatch) c.add(obs.ts, counterKey('routerScoresAnyMatch'));
    const mbs = m.deployment.router.maxBatchSize ?? DEFAULT_ROUTER_MAX_BATCH_SIZE;
    const chosen = obs.candidates.find((x) => x.server === obs.chosen);
    if (chosen !== undefined) {
      const term = (x: { score: number; activeRequests: number }): number => x.score + x.activeRequests / mbs;
      const chosenTerm = term(chosen);
      if (obs.candidates.some((x) => term(x) - chosenTerm >= m.thresholds.sentAwayCacheDelta))
        c.add(obs.ts, counterKey('routerScoresSentAwayByLoad'));
    }
    const predicted = this.#predictions.peek(obs.requestId);
    if (predicted !== undefined) this.#joinScore(obs.ts, predicted, anyMatch);
    else this.#reportedScores.set(obs.requestId, anyMatch);
  }

  /** In-flight requests per server at decision time. */
  #load(ts: number, inflight: Readonly<Record<string, number>>): void {
    const m = this.model;
    const c = m.counters;
    let busiest = 0;
    for (const [s, n] of Object.entries(inflight)) {
      busiest = Math.max(busiest, n);
      c.add(ts, counterKey('inflightSum', s), n);
      c.add(ts, counterKey('inflightReports', s));
      this.#inflight.set(s, n);
    }
    c.add(ts, counterKey('maxInflightSum'), busiest);
    c.add(ts, counterKey('maxInflightReports'));
    // how far the load term alone separates the servers: (busiest − idlest) / max_batch_size
    const counts = Object.values(inflight);
    const spread =
      counts.length > 1
        ? (busiest - Math.min(...counts)) / (m.deployment.router.maxBatchSize ?? DEFAULT_ROUTER_MAX_BATCH_SIZE)
        : 0;
    if (spread >= m.thresholds.sentAwayCacheDelta) c.add(ts, counterKey('loadSpreadOverCacheDelta'));
    c.max(ts, counterKey('peakInflight'), busiest);
  }

  #countPreference(ts: number, holder: 'truth' | 'turn', sample: PreferenceSample | null): void {
    if (sample === null) return;
    const c = this.model.counters;
    c.add(ts, counterKey('preferenceDecisions', holder, sample.set));
    if (sample.holderChosen) c.add(ts, counterKey('preferenceHolderChosen', holder, sample.set));
    c.add(ts, counterKey('preferenceBlindExpected', holder, sample.set), sample.blindProbability);
  }

  #joinScore(ts: number, replicaPredicted: boolean, routerReported: boolean): void {
    if (!replicaPredicted) return;
    this.model.counters.add(ts, counterKey('replicaPredictedMatch'));
    if (!routerReported) this.model.counters.add(ts, counterKey('replicaMatchRouterNone'));
  }
}
