// Evaluations of the rules: each runs every rule over one input and steps the hysteresis, giving the findings that
// hold, the verdict, and the rule errors counted so far. Only evaluate() advances anything; the last evaluation is
// read as often as anyone likes. Pure: the input carries `now`.
import { FINDING_CATALOG, severityRank } from './finding-catalog.js';
import type { Finding } from './finding.js';
import { FindingHysteresis, type HysteresisOptions } from './finding-hysteresis.js';
import type { DiagnosisInput, Rule } from './rule.js';
import { runRules } from './run-rules.js';
import { verdictOf, type Verdict } from './verdict.js';

export interface Evaluation {
  /** the input's time */
  readonly at: number;
  readonly findings: readonly Finding[];
  readonly verdict: Verdict;
  /** rules that threw, over every evaluation so far */
  readonly ruleErrors: number;
}

/** What a state that was never evaluated shows: nothing found, and no all-clear either. */
export const NOT_EVALUATED: Omit<Evaluation, 'at'> = { findings: [], verdict: 'unknown', ruleErrors: 0 };

export class RuleEvaluator {
  readonly #rules: readonly Rule[];
  readonly #hysteresis: FindingHysteresis;
  #ruleErrors = 0;
  #last: Evaluation | null = null;

  constructor(rules: readonly Rule[], hysteresis: HysteresisOptions) {
    this.#rules = rules;
    this.#hysteresis = new FindingHysteresis(hysteresis);
  }

  /** null before the first evaluation */
  get last(): Evaluation | null {
    return this.#last;
  }

  evaluate(input: DiagnosisInput): Evaluation {
    const run = runRules(this.#rules, input);
    this.#ruleErrors += run.errors.length;
    const findings = this.#hysteresis.update(input.now, run.hits);
    // a warning or critical that holds but has not passed hysteresis yet: no all-clear meanwhile
    const pending = new Set(
      [...run.hits.entries()]
        .filter(
          ([id, hit]) =>
            severityRank(hit.severity ?? FINDING_CATALOG[id]) >= severityRank('warning') &&
            !findings.some((f) => f.id === id),
        )
        .map(([id]) => id),
    );
    this.#last = { at: input.now, findings, verdict: verdictOf(findings, pending), ruleErrors: this.#ruleErrors };
    return this.#last;
  }

  /**
   * What the rules say of `input` as they stand, without hysteresis and recording nothing (no step, no rule error
   * counted): every hit is a finding, since = now.
   */
  rulesOf(input: DiagnosisInput): Evaluation {
    const findings = [...runRules(this.#rules, input).hits].map(([id, hit]): Finding => ({
      id,
      severity: FINDING_CATALOG[id],
      since: input.now,
      ...hit,
    }));
    return { at: input.now, findings, verdict: verdictOf(findings, new Set()), ruleErrors: this.#ruleErrors };
  }
}
