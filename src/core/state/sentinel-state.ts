// The sidecar's one state: fed observations (apply), evaluated by one clock (evaluate), read through snapshots
// (snapshot). Each observation goes to the reducer of its concern — admission (server cap), worker events, router
// deliveries, decisions and outcomes, source health — which count into one typed counter schema (counter-schema.ts)
// and update the tables; pure projections give the rules' input (DiagnosisInput) and the outputs' snapshot. The
// rules (docs/design.md §5) run with hysteresis only when evaluate() is called: reading never advances them, so
// any number of readers see the same findings. Pure: `now` is a parameter, no I/O. Joined decisions and outcomes
// stream to subscribers.
import type { DiagnosisInput } from '../diagnosis/rule.js';
import { NOT_EVALUATED, RuleEvaluator, type Evaluation } from '../diagnosis/rule-evaluator.js';
import { RULES } from '../diagnosis/rules/index.js';
import { DEFAULT_THRESHOLDS } from '../diagnosis/thresholds.js';
import type { Observation } from '../observe/observation.js';
import { DecisionsReducer } from './decisions-reducer.js';
import { projectDiagnosisInput } from './diagnosis-projection.js';
import { JoinedEventStream, type JoinedEventListener } from './joined-events.js';
import type { ObservationDigest } from './observation-digester.js';
import { OutcomesReducer } from './outcomes-reducer.js';
import { RenderParity } from './render-parity.js';
import { RouterDeliveriesReducer } from './router-deliveries-reducer.js';
import { DEFAULT_LIMITS, type SentinelOptions } from './sentinel-options.js';
import { ServerAdmission } from './server-admission.js';
import type { SentinelStateSnapshot } from './snapshot.js';
import { projectSnapshot, type SnapshotSources } from './snapshot-projection.js';
import { SidecarStatsReducer } from './sidecar-stats-reducer.js';
import { SourceHealthBoard } from './source-health-board.js';
import { StateModel } from './state-model.js';
import { inTokens } from './worker-block-counts.js';
import { WorkerEventsReducer } from './worker-events-reducer.js';

export { type SentinelLimits, type SentinelMode, type SentinelOptions } from './sentinel-options.js';
export type { SentinelStateSnapshot } from './snapshot.js';

export interface SentinelState {
  /** Applies one observation; `digest` is given when it was computed at record time (bundles). */
  apply(obs: Observation, digest?: ObservationDigest | null): void;
  /**
   * Runs the rules over the state at `now` and steps their hysteresis: the one call that changes the findings. The
   * daemon calls it from its evaluation timer, a one-shot run once at its end. Returns the evaluation's snapshot.
   */
  evaluate(now: number): SentinelStateSnapshot;
  /**
   * The state at `now` as the outputs read it, changing nothing: the latest counters, the last evaluation's findings
   * and verdict (before the first: none, verdict unknown).
   */
  snapshot(now: number): SentinelStateSnapshot;
  /** The last evaluation's snapshot whole (counters and findings from one input, as a report wants); null before one. */
  lastEvaluation(): SentinelStateSnapshot | null;
  /**
   * The snapshot with what the rules say at `now` as they stand, changing nothing: no hysteresis, no evaluation
   * recorded, no rule error counted; every hit is a finding (since = now). A one-shot audit's timeline samples it
   * between observations, so sampling cannot change the audit's result.
   */
  rulesAt(now: number): SentinelStateSnapshot;
  /** What the rules would read at `now` (tests, debugging). */
  diagnosisInput(now: number): DiagnosisInput;
  /** Every decision and outcome applied from now on, joined (the live feed); returns the unsubscribe. */
  subscribe(listener: JoinedEventListener): () => void;
  /**
   * Every observation applied from now on, as admitted, with the digest the state used (the observation stream a
   * one-shot audit attaches to: it replays them as a bundle's records); returns the unsubscribe.
   */
  onApplied(listener: AppliedListener): () => void;
}

export type AppliedListener = (observation: Observation, digest: ObservationDigest | null) => void;

export function createSentinelState(options: SentinelOptions = {}): SentinelState {
  return new Sentinel(options);
}

class Sentinel implements SentinelState {
  readonly #model: StateModel;
  readonly #admission: ServerAdmission;
  readonly #sources: SourceHealthBoard;
  readonly #workerEvents: WorkerEventsReducer;
  readonly #router: RouterDeliveriesReducer;
  readonly #decisions: DecisionsReducer;
  readonly #outcomes: OutcomesReducer;
  readonly #render: RenderParity;
  readonly #sidecar = new SidecarStatsReducer();
  readonly #joined = new JoinedEventStream();
  readonly #applied = new Set<{ readonly listener: AppliedListener }>();
  readonly #parts: SnapshotSources;
  readonly #evaluator: RuleEvaluator;
  /** the snapshot of the last evaluation */
  #lastEvaluation: SentinelStateSnapshot | null = null;

  constructor(options: SentinelOptions) {
    const limits = { ...DEFAULT_LIMITS, ...options.limits };
    const windowMs = options.windowMs ?? null;
    this.#model = new StateModel(
      options.mode ?? 'auto',
      { ...DEFAULT_THRESHOLDS, ...options.thresholds },
      limits,
      windowMs,
    );
    this.#admission = new ServerAdmission(limits.servers);
    this.#sources = new SourceHealthBoard(limits.sources);
    this.#workerEvents = new WorkerEventsReducer(this.#model, this.#sources);
    this.#router = new RouterDeliveriesReducer(this.#model);
    this.#decisions = new DecisionsReducer(this.#model);
    this.#outcomes = new OutcomesReducer(this.#model, this.#decisions, this.#workerEvents);
    this.#render = new RenderParity(windowMs);
    this.#parts = {
      model: this.#model,
      decisions: this.#decisions,
      outcomes: this.#outcomes,
      sources: this.#sources,
      admission: this.#admission,
      sidecar: this.#sidecar,
    };
    this.#evaluator = new RuleEvaluator(options.rules ?? RULES, options.hysteresis ?? { onAfter: 1, offAfter: 1 });
  }

  apply(observation: Observation, digest?: ObservationDigest | null): void {
    const admitted = this.#admission.admit(observation);
    if (admitted === null) return;
    // in tokens from here on: the reducers, the listeners and the joined stream see the counts they always did
    const obs = inTokens(admitted, this.#model.deployment);
    const digester = this.#model.digester;
    const d = digest !== undefined ? digest : digester.digest(obs);
    digester.observe(obs, d);
    for (const a of this.#applied) a.listener(obs, d);
    this.#decisions.expirePending(obs.ts);
    switch (obs.kind) {
      case 'worker-events':
        this.#workerEvents.workerEvents(obs, d?.kind === 'worker-events' ? d.digest.stored : null);
        return;
      case 'stream-sequence':
        this.#workerEvents.streamSequence(obs);
        return;
      case 'router-poll':
        this.#router.routerPoll(obs);
        return;
      case 'poll-failure':
        this.#router.pollFailure(obs.ts, obs.server);
        return;
      case 'router-state':
        this.#router.routerState(obs);
        return;
      case 'router-server-fact':
        this.#router.routerServerFact(obs);
        return;
      case 'decision': {
        const join = this.#decisions.decision(obs, d?.kind === 'decision' ? d.keys : null, this.#joined.active);
        if (join !== null) this.#joined.publish({ kind: 'decision', observation: obs, join });
        return;
      }
      case 'outcome': {
        const join = this.#outcomes.outcome(obs, d?.kind === 'outcome' ? d.keys : null, this.#joined.active);
        if (this.#joined.active) this.#joined.publish({ kind: 'outcome', observation: obs, join });
        return;
      }
      case 'router-score':
        this.#router.routerScore();
        this.#decisions.routerScore(obs);
        return;
      case 'render-check':
        this.#render.observe(obs, this.#model.routerChunkSize());
        return;
      case 'source-health':
        this.#sources.report(obs.ts, obs.source, obs.up, obs.error);
        return;
      case 'sidecar-load':
        this.#model.sidecarLoad.load(obs);
        return;
      case 'sidecar-stats':
        this.#sidecar.stats(obs);
        return;
      case 'server-info':
        // the deployment's facts keep what it states of hashing; the capacity bounds the sticky ideal
        if (obs.kvCapacityBlocks !== undefined && obs.kvCapacityBlocks !== null)
          this.#model.capacity.configure(obs.server, obs.kvCapacityBlocks);
        return;
      case 'router-config':
        // the deployment's facts keep what it states
        return;
    }
  }

  subscribe(listener: JoinedEventListener): () => void {
    return this.#joined.subscribe(listener);
  }

  onApplied(listener: AppliedListener): () => void {
    // a fresh wrapper per call: the same function added twice is two subscriptions
    const entry = { listener };
    this.#applied.add(entry);
    return () => void this.#applied.delete(entry);
  }

  diagnosisInput(now: number): DiagnosisInput {
    return projectDiagnosisInput(
      {
        model: this.#model,
        workerEvents: this.#workerEvents,
        decisions: this.#decisions,
        router: this.#router,
        sources: this.#sources,
        render: this.#render,
      },
      now,
    );
  }

  evaluate(now: number): SentinelStateSnapshot {
    const input = this.diagnosisInput(now);
    this.#lastEvaluation = this.#project(now, input, this.#evaluator.evaluate(input));
    return this.#lastEvaluation;
  }

  snapshot(now: number): SentinelStateSnapshot {
    return this.#project(now, this.diagnosisInput(now), this.#evaluator.last ?? NOT_EVALUATED);
  }

  lastEvaluation(): SentinelStateSnapshot | null {
    return this.#lastEvaluation;
  }

  rulesAt(now: number): SentinelStateSnapshot {
    const input = this.diagnosisInput(now);
    return this.#project(now, input, this.#evaluator.rulesOf(input));
  }

  #project(now: number, input: DiagnosisInput, evaluation: Omit<Evaluation, 'at'>): SentinelStateSnapshot {
    return projectSnapshot(this.#parts, now, input, evaluation);
  }
}
