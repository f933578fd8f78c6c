// The state's stream of joined decisions and outcomes (docs/design.md §4): each decision as the state joined it with
// both tables, each outcome with the decision it closed. The live feed reads it; the join travels with the
// observation it was made from, so nobody pairs them again. Token counts only, never token ids.
import type { DecisionObservation, OutcomeObservation } from '../observe/observation.js';

/** What each server's router table (replica) and real cache (worker truth) held for one prompt, and the score. */
export interface JoinCandidate {
  readonly server: string;
  readonly predictedTokens: number;
  readonly oracleTokens: number;
  readonly score: number;
}

/** One decision joined with both tables. */
export interface DecisionJoin {
  readonly ts: number;
  readonly requestId: string;
  readonly correlationId: string | null;
  readonly server: string;
  /** a later turn of a trajectory seen before, and whether it stayed on the previous turn's server */
  readonly followup: boolean;
  readonly sticky: boolean | null;
  /** prompt tokens the router hashes (null without token ids) */
  readonly hashedTokens: number | null;
  /** per server: tokens the router's table (replica) matches, tokens the worker really holds, the router's score */
  readonly candidates: readonly JoinCandidate[];
  /** servers holding the longest prefix (empty when none holds any) */
  readonly oracleBest: readonly string[];
  readonly chosenIsOracleBest: boolean | null;
}

/** A decision's outcome joined with its decision: the outcome's counts, and what the join adds. */
export interface OutcomeJoin extends Pick<
  OutcomeObservation,
  'ts' | 'requestId' | 'server' | 'ok' | 'promptTokens' | 'cachedTokens'
> {
  /** what the best server held when the request was routed (null without keys) */
  readonly oracleCachedTokens: number | null;
  /** a follow-up turn that found less than half of its prompt cached */
  readonly scattered: boolean;
}

/** A decision or outcome the state applied, with its join; an outcome of an unknown decision has none. */
export type JoinedEvent =
  | { readonly kind: 'decision'; readonly observation: DecisionObservation; readonly join: DecisionJoin }
  | { readonly kind: 'outcome'; readonly observation: OutcomeObservation; readonly join: OutcomeJoin | null };

export type JoinedEventListener = (event: JoinedEvent) => void;

/** The listeners of one state. Listeners run synchronously inside apply() and must not throw. */
export class JoinedEventStream {
  readonly #listeners = new Set<JoinedEventListener>();

  /** Anyone listening: the per-server candidates are computed only then. */
  get active(): boolean {
    return this.#listeners.size > 0;
  }

  subscribe(listener: JoinedEventListener): () => void {
    // a fresh wrapper: the same function subscribed twice is two subscriptions, each undone by its own call
    const entry: JoinedEventListener = (event) => listener(event);
    this.#listeners.add(entry);
    return () => {
      this.#listeners.delete(entry);
    };
  }

  publish(event: JoinedEvent): void {
    for (const listener of this.#listeners) listener(event);
  }
}
