// Outcomes into the state: each closes its pending decision (decisions-reducer.ts), gives the trajectory's turn
// length, backfills the router's own keys, and counts realised against oracle cached tokens: the oracle-best server
// from worker truth when the sidecar sees stored events, else the sticky ideal.
import type { OutcomeObservation } from '../observe/observation.js';
import { counterKeys, type KeptBy } from './counter-key.js';
import type { DecisionJoinCounters } from './decision-join.js';
import type { DecisionsReducer, PendingDecision } from './decisions-reducer.js';
import type { OutcomeJoin } from './joined-events.js';
import type { DecisionKeys } from './observation-digester.js';
import type { StateModel } from './state-model.js';
import type { WorkerTruthSeen } from './worker-events-reducer.js';
import { workerTokenOracle } from './worker-token-oracle.js';

/** The counters of the outcomes, grouped by the labels they are kept by (counter-key.ts). */
export type OutcomeCounters = KeptBy<
  ['server'],
  | 'outcomes'
  | 'failures'
  | 'promptTokens'
  | 'cachedTokens'
  | 'oracleCachedTokens'
  | 'joinedOutcomes'
  | 'realisedAboveOracle'
> &
  KeptBy<
    [],
    | 'withOutcome'
    | 'withWorkerTokens'
    | 'followupsWithOutcome'
    | 'scattered'
    | 'avoidableScattered'
    | 'avoidableScatterLostTokens'
    | 'followupPromptTokens'
    | 'stickyIdealMovedTurns'
    | 'stickyIdealEvictedTurns'
    | 'stickyIdealUnboundedTurns'
    | 'stickyIdealCachedTokens'
    | 'stickyIdealPromptTokens'
    | 'joinedPromptTokens'
    | 'joinedCachedTokens'
    | 'joinedOracleCachedTokens'
  >;

const counterKey = counterKeys<OutcomeCounters & DecisionJoinCounters>();

export class OutcomesReducer {
  #withoutDecision = 0;

  readonly model: StateModel;
  readonly decisions: DecisionsReducer;
  /** whether worker truth can say where a prefix was (the worker-events reducer knows) */
  readonly truth: WorkerTruthSeen;

  constructor(model: StateModel, decisions: DecisionsReducer, truth: WorkerTruthSeen) {
    this.model = model;
    this.decisions = decisions;
    this.truth = truth;
  }

  /** outcomes whose decision was unknown (never seen, or already dropped) */
  get withoutDecision(): number {
    return this.#withoutDecision;
  }

  /** Applies an outcome; returns its join with the decision it closed when `withJoin` (null when that is unknown). */
  outcome(obs: OutcomeObservation, workerKeys: DecisionKeys | null, withJoin: boolean): OutcomeJoin | null {
    const m = this.model;
    const c = m.counters;
    const { server, ts } = obs;
    c.add(ts, counterKey('outcomes', server));
    if (!obs.ok) c.add(ts, counterKey('failures', server));
    const prompt = obs.promptTokens ?? 0;
    const cached = Math.min(obs.cachedTokens ?? 0, prompt);
    if (obs.ok && obs.promptTokens !== null) {
      c.add(ts, counterKey('promptTokens', server), prompt);
      c.add(ts, counterKey('cachedTokens', server), cached);
      m.capacity.observeServed(server, prompt, cached);
      // a request that computed a whole new block stored it: its events are due on the pull path (event-queue-shared)
      if (m.pullEvents.watching(server) && prompt - cached >= Math.max(m.deployment.blockSizeOf(server) ?? 1, 1))
        m.pullEvents.servedNewBlocks(server);
    }
    const pending = this.decisions.pending.peek(obs.requestId);
    if (pending === undefined) {
      this.#withoutDecision++;
      return null;
    }
    this.decisions.pending.delete(obs.requestId);
    c.add(ts, counterKey('withOutcome'));
    const traj = pending.correlationId === null ? undefined : this.decisions.trajectories.peek(pending.correlationId);
    if (traj !== undefined && obs.ok && traj.lastServer === server) {
      // the next turn's sticky ideal needs this turn's length (the usage, or the worker's ids, when the request had
      // none) and what this server had stored by now
      const count = obs.promptTokens ?? obs.workerPromptTokens?.length ?? null;
      if (pending.countFromOutcome && count !== null) traj.lastPromptTokens = count;
      traj.lastAllocatedTokens = m.capacity.allocatedTokens(server);
    }
    if (pending.backfillKeys !== null && obs.ok)
      for (const k of pending.backfillKeys) m.replica.backfill(pending.server, k, pending.backfillAlgo);
    const scattered = obs.ok && obs.promptTokens !== null && pending.followup && cached < 0.5 * prompt;
    const join: OutcomeJoin | null = !withJoin
      ? null
      : {
          ts,
          requestId: obs.requestId,
          server,
          ok: obs.ok,
          promptTokens: obs.promptTokens,
          cachedTokens: obs.cachedTokens,
          oracleCachedTokens: pending.hasKeys ? Math.max(Math.min(pending.oracleBestTokens, prompt), cached) : null,
          scattered,
        };
    if (!obs.ok || obs.promptTokens === null) return join;
    const ideal = this.#stickyIdeal(ts, pending, prompt, cached);
    c.add(ts, counterKey('stickyIdealCachedTokens'), ideal);
    c.add(ts, counterKey('stickyIdealPromptTokens'), prompt);
    // the exported oracle (kvsentinel_oracle_cached_tokens_total) follows the diagnosis: the oracle-best server from
    // worker truth when the sidecar sees stored events, else the sticky ideal — so the tokens lost it gives are those
    // hit-rate-below-oracle reports, also with events off
    // text and chat requests: the worker's own ids (CTX response) give the oracle once the outcome is in
    const workerBest =
      !pending.hasKeys && workerKeys !== null ? this.#workerTokenJoin(ts, server, cached, workerKeys) : null;
    const joined = pending.hasKeys || workerBest !== null;
    const truthOracle = joined && m.seesWorkerEvents && this.truth.truthSeen;
    // the best achievable never trails what was achieved: the chosen server held at least what it reused
    const oracleBest = Math.max(Math.min(workerBest ?? pending.oracleBestTokens, prompt), cached);
    const turnOracle = truthOracle ? oracleBest : ideal;
    c.add(ts, counterKey('oracleCachedTokens', server), turnOracle);
    if (pending.followup) {
      c.add(ts, counterKey('followupsWithOutcome'));
      c.add(ts, counterKey('followupPromptTokens'), prompt);
      if (scattered) {
        c.add(ts, counterKey('scattered'));
        // avoidable by routing: by the same oracle, some server held at least half of the prompt (worker truth), or
        // (without truth) the turn left a server that, by its capacity, still held its earlier turn
        if (turnOracle >= 0.5 * prompt) {
          c.add(ts, counterKey('avoidableScattered'));
          c.add(ts, counterKey('avoidableScatterLostTokens'), turnOracle - cached);
        }
      }
    }
    if (joined) {
      c.add(ts, counterKey('joinedPromptTokens'), prompt);
      c.add(ts, counterKey('joinedCachedTokens'), cached);
      c.add(ts, counterKey('joinedOracleCachedTokens'), oracleBest);
    }
    if (pending.hasKeys) {
      c.add(ts, counterKey('joinedOutcomes', server));
      if (cached > pending.oracleChosenTokens + Math.max(pending.blockSize, 1))
        c.add(ts, counterKey('realisedAboveOracle', server));
    }
    return join;
  }

  /**
   * The sticky ideal of one served request (never below the realised): a first turn keeps what it reused; a follow-up
   * back on its previous server keeps what that server reported reusing (cached_tokens: what it still held); one that
   * moved gets its previous turn back, unless that server had since stored as many tokens as it can hold.
   */
  #stickyIdeal(ts: number, pending: PendingDecision, prompt: number, cached: number): number {
    if (
      !pending.followup ||
      pending.sticky !== false ||
      pending.prevPromptTokens === null ||
      pending.prevServer === null
    )
      return cached;
    const m = this.model;
    const c = m.counters;
    c.add(ts, counterKey('stickyIdealMovedTurns'));
    const capacity = m.capacity.of(pending.prevServer);
    const blockSize = m.deployment.blockSizeOf(pending.prevServer);
    if (capacity === null || blockSize === null || pending.prevAllocatedTokens === null) {
      c.add(ts, counterKey('stickyIdealUnboundedTurns'));
    } else if (
      m.capacity.allocatedTokens(pending.prevServer) - pending.prevAllocatedTokens >=
      capacity.blocks * blockSize
    ) {
      c.add(ts, counterKey('stickyIdealEvictedTurns'));
      return cached;
    }
    return Math.max(cached, Math.min(pending.prevPromptTokens, prompt - 1));
  }

  /** The oracle of a decision that had no keys, from the worker's prompt ids; returns the best server's tokens. */
  #workerTokenJoin(ts: number, server: string, cached: number, keys: DecisionKeys): number {
    const m = this.model;
    const c = m.counters;
    const join = workerTokenOracle({
      servers: m.deployment.serverIds(),
      chosen: server,
      cachedTokens: cached,
      keys,
      truth: m.truth,
      blockSizeOf: (s) => m.deployment.blockSizeOf(s),
      hashAlgoOf: (s) => m.deployment.hashAlgoOf(s),
    });
    c.add(ts, counterKey('withWorkerTokens'));
    if (join.best > 0) c.add(ts, counterKey('oracleAnyMatch'));
    if (join.best <= 0) c.add(ts, counterKey('noPrefix'));
    else {
      c.add(ts, counterKey(join.chosenIsBest ? 'oracleBest' : 'notOracleBest'));
      c.add(ts, counterKey('oracleBestByChance'), join.bestServers.length / join.servers.length);
      for (const s of join.bestServers) c.add(ts, counterKey('oracleBestHeldBy', s));
    }
    return join.best;
  }
}
