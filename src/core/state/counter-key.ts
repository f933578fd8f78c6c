// Keys of the state's counters. Each reducer declares the counters it keeps (an interface: counter name → the
// labels it is kept by) and makes its keys with counterKeys<ItsCounters>(); counter-schema.ts joins every
// declaration for the projections. A misspelt name, a missing label or a label of the wrong type does not compile.
import type { PreferenceSample } from '../diagnosis/holder-preference.js';
import type { RequestUnreadableReason } from '../relay/request-unreadable.js';

export interface CounterLabelTypes {
  readonly server: string;
  readonly rank: number;
  readonly reason: RequestUnreadableReason;
  /** whose holding the router is tested against: the oracle-best server (truth) or the previous turn's (turn) */
  readonly holder: 'truth' | 'turn';
  readonly set: PreferenceSample['set'];
}

type Label = keyof CounterLabelTypes;

/** A declaration of counters: every name with the labels it is kept by. */
export type CounterDeclarations<T> = { readonly [K in keyof T]: readonly Label[] };

/** Counters kept by the same labels, named once each: `KeptBy<['server'], 'polls' | 'failures'>`. */
export type KeptBy<Labels extends readonly Label[], Names extends string> = { readonly [N in Names]: Labels };

type LabelValues<Labels> = {
  readonly [I in keyof Labels]: Labels[I] extends Label ? CounterLabelTypes[Labels[I]] : never;
};

/** A key of one counter: made by a counterKeys function only. */
export type CounterKey = string & { readonly __counterKey: never };

function key(name: string, ...labels: readonly (string | number)[]): CounterKey {
  if (labels.length === 0) return name as CounterKey;
  if (labels.length === 1) return `${name}|${labels[0]}` as CounterKey;
  return `${name}|${labels.join('|')}` as CounterKey;
}

/** The key maker of one declaration of counters. */
export function counterKeys<T extends CounterDeclarations<T>>(): <N extends keyof T & string>(
  name: N,
  ...labels: LabelValues<T[N]>
) => CounterKey {
  return key;
}
