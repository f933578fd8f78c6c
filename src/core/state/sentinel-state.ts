// The sidecar's one state: fed observations (apply), read through snapshots (snapshot). Each observation goes to
// the reducer of its concern — admission (server cap), worker events, router deliveries, decisions and outcomes,
// source health — which count into one typed counter schema (counter-schema.ts) and update the tables; pure
// projections give the rules' input (DiagnosisInput) and the outputs' snapshot. The rules (docs/design.md §5) run
// here with hysteresis. Pure: `now` is a parameter, no I/O. Joined decisions and outcomes stream to subscribers.
import { FINDING_CATALOG, severityRank } from '../diagnosis/finding-catalog.js';
import { FindingHysteresis } from '../diagnosis/finding-hysteresis.js';
import type { DiagnosisInput, Rule } from '../diagnosis/rule.js';
import { RULES } from '../diagnosis/rules/index.js';
import { runRules } from '../diagnosis/run-rules.js';
import { DEFAULT_THRESHOLDS } from '../diagnosis/thresholds.js';
import type { Observation } from '../observe/observation.js';
import { DecisionsReducer } from './decisions-reducer.js';
import { projectDiagnosisInput } from './diagnosis-projection.js';
import { JoinedEventStream, type JoinedEventListener } from './joined-events.js';
import type { ObservationDigest, ObservationDigester } from './observation-digester.js';
import { OutcomesReducer } from './outcomes-reducer.js';
import { RenderParity } from './render-parity.js';
import { RouterDeliveriesReducer } from './router-deliveries-reducer.js';
import { DEFAULT_LIMITS, type SentinelOptions } from './sentinel-options.js';
import { ServerAdmission } from './server-admission.js';
import type { SentinelStateSnapshot } from './snapshot.js';
import { projectSnapshot, type SnapshotSources } from './snapshot-projection.js';
import { SourceHealthBoard } from './source-health-board.js';
import { StateModel } from './state-model.js';
import { WorkerEventsReducer } from './worker-events-reducer.js';
import type { Finding } from '../diagnosis/finding.js';

export { type SentinelLimits, type SentinelMode, type SentinelOptions } from './sentinel-options.js';
export type { SentinelStateSnapshot } from './snapshot.js';

export interface SentinelState {
  /** Applies one observation; `digest` is given when it was computed at record time (bundles). */
  apply(obs: Observation, digest?: ObservationDigest | null): void;
  /**
   * The state at `now` as the outputs read it. Evaluations of the rules are throttled (evaluateEveryMs): between
   * them the counters are the latest and the findings the last evaluation's, unless `whole` (the last evaluation's
   * snapshot, counters included) or `fresh` (evaluate now) asks for one set of numbers, as a report does.
   */
  snapshot(now: number, options?: SnapshotOptions): SentinelStateSnapshot;
  /**
   * The snapshot as the rules read the state at `now`, without changing it: no hysteresis step, no evaluation
   * recorded, no rule error counted; findings are the rules' hits (since = now). The report's timeline samples
   * it, so sampling a one-shot audit cannot change its result.
   */
  peek(now: number): SentinelStateSnapshot;
  /** What the rules would read at `now` (tests, debugging). */
  diagnosisInput(now: number): DiagnosisInput;
  /** Every decision and outcome applied from now on, joined (the live feed); returns the unsubscribe. */
  subscribe(listener: JoinedEventListener): () => void;
  /**
   * Every observation applied from now on, as admitted, with the digest the state used (the observation stream a
   * one-shot audit attaches to: it replays them as a bundle's records); returns the unsubscribe.
   */
  onApplied(listener: AppliedListener): () => void;
  readonly digester: ObservationDigester;
}

export type AppliedListener = (observation: Observation, digest: ObservationDigest | null) => void;

export interface SnapshotOptions {
  /** evaluate now even when the last evaluation is recent (a one-shot run's final report) */
  readonly fresh?: boolean;
  /** between evaluations, the last evaluation's snapshot whole (a live report, without an extra hysteresis step) */
  readonly whole?: boolean;
}

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
  readonly #joined = new JoinedEventStream();
  readonly #applied = new Set<{ readonly listener: AppliedListener }>();
  readonly #parts: SnapshotSources;
  readonly #rules: readonly Rule[];
  readonly #hysteresis: FindingHysteresis;
  readonly #evaluateEveryMs: number;
  #ruleErrors = 0;
  #lastEvaluation: number | null = null;
  /** the snapshot of the last evaluation (returned until the next one is due) */
  #last: SentinelStateSnapshot | null = null;
  #findings: Finding[] = [];
  /** warnings and criticals that hold in the latest evaluation but have not turned on yet (hysteresis) */
  #pendingFindings: ReadonlySet<string> = new Set();

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
    this.#outcomes = new OutcomesReducer(this.#model, this.#decisions);
    this.#render = new RenderParity(windowMs);
    this.#parts = {
      model: this.#model,
      decisions: this.#decisions,
      outcomes: this.#outcomes,
      sources: this.#sources,
      admission: this.#admission,
    };
    this.#rules = options.rules ?? RULES;
    this.#hysteresis = new FindingHysteresis(options.hysteresis ?? { onAfter: 1, offAfter: 1 });
    this.#evaluateEveryMs = options.evaluateEveryMs ?? 0;
  }

  get digester(): ObservationDigester {
    return this.#model.digester;
  }

  apply(observation: Observation, digest?: ObservationDigest | null): void {
    const obs = this.#admission.admit(observation);
    if (obs === null) return;
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
      case 'server-info':
        // the digester keeps what it states of hashing; the capacity bounds the sticky ideal
        if (obs.kvCapacityBlocks !== undefined && obs.kvCapacityBlocks !== null)
          this.#model.capacity.configure(obs.server, obs.kvCapacityBlocks);
        return;
      case 'router-config':
        // the digester keeps what it states
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
    return projectDiagnosisInput({ model: this.#model, sources: this.#sources, render: this.#render }, now);
  }

  snapshot(now: number, options: SnapshotOptions = {}): SentinelStateSnapshot {
    const due =
      options.fresh === true ||
      this.#lastEvaluation === null ||
      now < this.#lastEvaluation ||
      now - this.#lastEvaluation >= this.#evaluateEveryMs;
    // a report's headline and its findings' evidence from one input (they disagreed by a second of traffic)
    if (!due && options.whole === true && this.#last !== null) return this.#last;
    const input = this.diagnosisInput(now);
    if (due) {
      const run = runRules(this.#rules, input);
      this.#ruleErrors += run.errors.length;
      this.#findings = this.#hysteresis.update(now, run.hits);
      // a finding that holds but has not passed hysteresis yet: no all-clear meanwhile
      this.#pendingFindings = new Set(
        [...run.hits.entries()]
          .filter(
            ([id, hit]) =>
              severityRank(hit.severity ?? FINDING_CATALOG[id]) >= severityRank('warning') &&
              !this.#findings.some((f) => f.id === id),
          )
          .map(([id]) => id),
      );
      this.#lastEvaluation = now;
    }
    const snapshot = projectSnapshot(this.#parts, now, input, {
      findings: this.#findings,
      pending: this.#pendingFindings,
      ruleErrors: this.#ruleErrors,
    });
    if (due) this.#last = snapshot;
    return snapshot;
  }

  peek(now: number): SentinelStateSnapshot {
    const input = this.diagnosisInput(now);
    const findings = [...runRules(this.#rules, input).hits].map(([id, hit]): Finding => ({
      id,
      severity: FINDING_CATALOG[id],
      since: now,
      ...hit,
    }));
    return projectSnapshot(this.#parts, now, input, { findings, pending: new Set(), ruleErrors: this.#ruleErrors });
  }
}
