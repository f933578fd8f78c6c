// Outcomes into the state: each closes its pending decision (decisions-reducer.ts), gives the trajectory's turn
// length, backfills the router's own keys, and counts realised against oracle cached tokens: the oracle-best server
// from worker truth when the sidecar sees stored events, else the sticky ideal.
import type { OutcomeObservation } from '../observe/observation.js';
import { counterKeys } from './counter-key.js';
import type { DecisionJoinCounters } from './decision-join.js';
import type { DecisionsReducer } from './decisions-reducer.js';
import type { OutcomeJoin } from './joined-events.js';
import type { DecisionKeys } from './observation-digester.js';
import type { StateModel } from './state-model.js';
import { workerTokenOracle } from './worker-token-oracle.js';

/** The counters of the outcomes, each with the labels it is kept by (counter-key.ts). */
export interface OutcomeCounters {
  readonly outcomes: readonly ['server'];
  readonly failures: readonly ['server'];
  readonly promptTokens: readonly ['server'];
  readonly cachedTokens: readonly ['server'];
  readonly oracleCachedTokens: readonly ['server'];
  readonly withOutcome: readonly [];
  readonly withWorkerTokens: readonly [];
  readonly followupsWithOutcome: readonly [];
  readonly scattered: readonly [];
  readonly avoidableScattered: readonly [];
  readonly stickyIdealCachedTokens: readonly [];
  readonly stickyIdealPromptTokens: readonly [];
  readonly joinedPromptTokens: readonly [];
  readonly joinedCachedTokens: readonly [];
  readonly joinedOracleCachedTokens: readonly [];
  readonly joinedOutcomes: readonly ['server'];
  readonly realisedAboveOracle: readonly ['server'];
}

const counterKey = counterKeys<OutcomeCounters & DecisionJoinCounters>();

export class OutcomesReducer {
  #withoutDecision = 0;

  readonly model: StateModel;
  readonly decisions: DecisionsReducer;

  constructor(model: StateModel, decisions: DecisionsReducer) {
    this.model = model;
    this.decisions = decisions;
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
      // a request that computed a whole new block stored it: its events are due on the pull path (event-queue-shared)
      const facts = m.factsOf(server);
      if (facts.lastPullEventTs !== null && prompt - cached >= Math.max(m.digester.blockSizeOf(server) ?? 1, 1))
        m.facts(server).newBlockOutcomesSincePullEvent++;
    }
    const pending = this.decisions.pending.peek(obs.requestId);
    if (pending === undefined) {
      this.#withoutDecision++;
      return null;
    }
    this.decisions.pending.delete(obs.requestId);
    c.add(ts, counterKey('withOutcome'));
    if (pending.countFromOutcome && pending.correlationId !== null && obs.ok) {
      // the next turn's sticky ideal needs this turn's length: the usage (or the worker's ids) gives it
      const traj = this.decisions.trajectories.peek(pending.correlationId);
      const count = obs.promptTokens ?? obs.workerPromptTokens?.length ?? null;
      if (traj !== undefined && count !== null && traj.lastServer === server) traj.lastPromptTokens = count;
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
    if (pending.followup) {
      c.add(ts, counterKey('followupsWithOutcome'));
      if (scattered) {
        c.add(ts, counterKey('scattered'));
        // avoidable: some server held at least half of the prompt (worker truth), or, without truth, the turn left
        // the server that held its earlier turns
        const avoidable =
          pending.hasKeys && m.truthSeen ? pending.oracleBestTokens >= 0.5 * prompt : pending.sticky === false;
        if (avoidable) c.add(ts, counterKey('avoidableScattered'));
      }
    }
    // the sticky ideal: every follow-up back on its previous server (never below the realised)
    const ideal = pending.followup
      ? Math.max(cached, pending.prevPromptTokens === null ? 0 : Math.min(pending.prevPromptTokens, prompt - 1))
      : cached;
    c.add(ts, counterKey('stickyIdealCachedTokens'), ideal);
    c.add(ts, counterKey('stickyIdealPromptTokens'), prompt);
    // the exported oracle (kvsentinel_oracle_cached_tokens_total) follows the diagnosis: the oracle-best server from
    // worker truth when the sidecar sees stored events, else the sticky ideal — so the tokens lost it gives are those
    // hit-rate-below-oracle reports, also with events off
    // text and chat requests: the worker's own ids (CTX response) give the oracle once the outcome is in
    const workerBest =
      !pending.hasKeys && workerKeys !== null ? this.#workerTokenJoin(ts, server, cached, workerKeys) : null;
    const joined = pending.hasKeys || workerBest !== null;
    const truthOracle = joined && m.seesWorkerEvents && m.truthSeen;
    if (!truthOracle) c.add(ts, counterKey('oracleCachedTokens', server), ideal);
    if (joined) {
      // the best achievable never trails what was achieved: the chosen server held at least what it reused
      const oracleBest = Math.max(Math.min(workerBest ?? pending.oracleBestTokens, prompt), cached);
      if (truthOracle) c.add(ts, counterKey('oracleCachedTokens', server), oracleBest);
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

  /** The oracle of a decision that had no keys, from the worker's prompt ids; returns the best server's tokens. */
  #workerTokenJoin(ts: number, server: string, cached: number, keys: DecisionKeys): number {
    const m = this.model;
    const c = m.counters;
    const join = workerTokenOracle({
      servers: m.digester.serverIds(),
      chosen: server,
      cachedTokens: cached,
      keys,
      truth: m.truth,
      blockSizeOf: (s) => m.digester.blockSizeOf(s),
      hashAlgoOf: (s) => m.digester.hashAlgoOf(s),
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
