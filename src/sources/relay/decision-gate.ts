// Keeps a relay's decisions and the event observations around them in the order things happened: a decision is
// recorded only once its body was read (and, with --tokenizer, rendered), which can take tens of ms; events the relay
// drains or delivers to the router meanwhile — possibly this very request's stored blocks — must not reach the
// tables before the decision that was taken without them. Each decision takes a slot when its body ends; an
// observation arriving behind an open slot waits for it (and only for the slots before it).
import type { Observation } from '../../core/observe/observation.js';
import type { ObservationSink } from '../ports.js';

interface Slot {
  done: boolean;
  observation: Observation | null;
}

export class DecisionGate implements ObservationSink {
  readonly #sink: ObservationSink;
  readonly #queue: (Slot | Observation)[] = [];

  constructor(sink: ObservationSink) {
    this.#sink = sink;
  }

  /** observations waiting behind an open decision */
  get held(): number {
    return this.#queue.filter((q) => !('done' in q)).length;
  }

  apply(observation: Observation): void {
    if (this.#queue.length === 0) this.#sink.apply(observation);
    else this.#queue.push(observation);
  }

  /** A place for a decision, in order; fill it once (null: no decision after all). */
  slot(): (observation: Observation | null) => void {
    const slot: Slot = { done: false, observation: null };
    this.#queue.push(slot);
    return (observation) => {
      if (slot.done) return;
      slot.done = true;
      slot.observation = observation;
      this.#flush();
    };
  }

  #flush(): void {
    while (this.#queue.length > 0) {
      const head = this.#queue[0]!;
      if ('done' in head && !head.done) return;
      this.#queue.shift();
      const observation = 'done' in head ? head.observation : head;
      if (observation !== null) this.#sink.apply(observation);
    }
  }
}
