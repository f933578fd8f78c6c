// Every counter the state keeps: the declarations of the reducers that keep them, joined for the projections that
// read them. A name is declared once, by the reducer of its concern, with the labels it is kept by (counter-key.ts).
import { counterKeys } from './counter-key.js';
import type { DecisionJoinCounters } from './decision-join.js';
import type { DecisionCounters } from './decisions-reducer.js';
import type { OutcomeCounters } from './outcomes-reducer.js';
import type { RouterDeliveryCounters } from './router-deliveries-reducer.js';
import type { WorkerEventCounters } from './worker-events-reducer.js';

export type { CounterKey } from './counter-key.js';

type Declarations = [
  WorkerEventCounters,
  RouterDeliveryCounters,
  DecisionCounters,
  DecisionJoinCounters,
  OutcomeCounters,
];

type KeysOf<U> = U extends unknown ? keyof U : never;
/** names declared by more than one reducer */
type DeclaredTwice<Ds> = Ds extends [infer Head, ...infer Rest]
  ? Extract<keyof Head, KeysOf<Rest[number]>> | DeclaredTwice<Rest>
  : never;
type Joined<Ds> = Ds extends [infer Head, ...infer Rest] ? Head & Joined<Rest> : unknown;

/** Every declaration joined; a name declared twice makes it unusable (each counter has one owner). */
export type CounterSchema = [DeclaredTwice<Declarations>] extends [never]
  ? Joined<Declarations>
  : { readonly declaredTwice: DeclaredTwice<Declarations> };

export const counterKey = counterKeys<CounterSchema>();
