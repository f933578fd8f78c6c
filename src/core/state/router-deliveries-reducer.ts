// What the router received and reported: its polls through the relay (the events it read enter the replica then),
// failed polls, its debug endpoint's state, and the facts its log states about a server.
import type {
  RouterPollObservation,
  RouterServerFactObservation,
  RouterStateObservation,
} from '../observe/observation.js';
import type { RouterStateView, ServerDiagnosis } from '../diagnosis/rule.js';
import { counterKeys, type KeptBy } from './counter-key.js';
import type { StateModel } from './state-model.js';

/** The counters of the router deliveries, grouped by the labels they are kept by (counter-key.ts). */
export type RouterDeliveryCounters = KeptBy<
  ['server'],
  | 'routerPolls'
  | 'eventsDeliveredToRouter'
  | 'eventsDroppedForConsumers'
  | 'pollFailures'
  | 'eventMatchDiagCalls'
  | 'eventMatchDiagTotalMatched'
  | 'eventMatchDiagEventMatched'
>;

const counterKey = counterKeys<RouterDeliveryCounters>();

/** What the router's debug endpoint and log state of one server: the latest of each. */
export interface RouterServerFacts {
  readonly routerState: RouterStateView | null;
  /** the newest router logged that it skips polling this server (tokens_per_block mismatch) */
  readonly pollingSkipped: ServerDiagnosis['pollingSkipped'];
  /** the last EVENT_MATCH_DIAG block counts */
  readonly eventBlocks: number | null;
  readonly totalBlocks: number | null;
}

const NO_FACTS: RouterServerFacts = { routerState: null, pollingSkipped: null, eventBlocks: null, totalBlocks: null };

/** What the projections read of the router's deliveries beyond counters. */
export interface RouterDeliveriesView {
  /** the router's debug endpoint delivered (its state or its scores) */
  readonly seesRouterDebug: boolean;
  factsOf(server: string): RouterServerFacts;
}

export class RouterDeliveriesReducer implements RouterDeliveriesView {
  readonly model: StateModel;
  #sawDebug = false;
  readonly #facts = new Map<string, RouterServerFacts>();

  constructor(model: StateModel) {
    this.model = model;
  }

  get seesRouterDebug(): boolean {
    return this.#sawDebug;
  }

  factsOf(server: string): RouterServerFacts {
    return this.#facts.get(server) ?? NO_FACTS;
  }

  #update(server: string, facts: Partial<RouterServerFacts>): void {
    this.#facts.set(server, { ...this.factsOf(server), ...facts });
  }

  /** The debug endpoint's scores of a decision arrived (the decisions reducer joins them). */
  routerScore(): void {
    this.#sawDebug = true;
  }

  routerPoll(obs: RouterPollObservation): void {
    const m = this.model;
    const { server, ts } = obs;
    // the router polls this server's pull path: what its stream put in the replica is not the router's view
    if (m.paths.routerPolled(server)) m.replica.clearServer(server);
    m.counters.add(ts, counterKey('routerPolls', server));
    m.counters.add(ts, counterKey('eventsDeliveredToRouter', server), Math.max(0, obs.toSeq - obs.fromSeq));
    m.counters.add(ts, counterKey('eventsDroppedForConsumers', server), obs.dropped);
    for (const event of m.relayOf(server).deliver(obs.fromSeq, obs.toSeq))
      m.replica.applyKeys(server, event.type, event.hashAlgo, event.keys);
  }

  pollFailure(ts: number, server: string): void {
    this.model.counters.add(ts, counterKey('pollFailures', server));
  }

  routerState(obs: RouterStateObservation): void {
    this.#sawDebug = true;
    this.#update(obs.server, {
      routerState: {
        ts: obs.ts,
        blockTableSize: obs.blockTableSize,
        activeRequests: obs.activeRequests,
        polls: obs.polls,
        pollFailures: obs.pollFailures,
      },
    });
  }

  routerServerFact(obs: RouterServerFactObservation): void {
    if (obs.fact === 'polling-skipped') {
      this.#update(obs.server, {
        pollingSkipped: {
          routerTokensPerBlock: obs.routerTokensPerBlock,
          workerTokensPerBlock: obs.workerTokensPerBlock,
          divisible: obs.divisible,
        },
      });
      return;
    }
    const c = this.model.counters;
    c.add(obs.ts, counterKey('eventMatchDiagCalls', obs.server));
    if (obs.totalMatch > 0) c.add(obs.ts, counterKey('eventMatchDiagTotalMatched', obs.server));
    if (obs.eventMatch > 0) c.add(obs.ts, counterKey('eventMatchDiagEventMatched', obs.server));
    this.#update(obs.server, { eventBlocks: obs.eventBlocks, totalBlocks: obs.totalBlocks });
  }
}
