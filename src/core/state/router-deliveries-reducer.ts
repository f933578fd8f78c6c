// What the router received and reported: its polls through the relay (the events it read enter the replica then),
// failed polls, its debug endpoint's state, and the facts its log states about a server.
import type {
  RouterPollObservation,
  RouterServerFactObservation,
  RouterStateObservation,
} from '../observe/observation.js';
import { counterKeys } from './counter-key.js';
import type { StateModel } from './state-model.js';

/** The counters of the router deliveries, each with the labels it is kept by (counter-key.ts). */
export interface RouterDeliveryCounters {
  readonly routerPolls: readonly ['server'];
  readonly eventsDeliveredToRouter: readonly ['server'];
  readonly eventsDroppedForConsumers: readonly ['server'];
  readonly pollFailures: readonly ['server'];
  readonly eventMatchDiagCalls: readonly ['server'];
  readonly eventMatchDiagTotalMatched: readonly ['server'];
  readonly eventMatchDiagEventMatched: readonly ['server'];
}

const counterKey = counterKeys<RouterDeliveryCounters>();

/** What the projections read of the router's deliveries beyond counters and facts. */
export interface RouterDeliveriesView {
  /** the router's debug endpoint delivered (its state or its scores) */
  readonly seesRouterDebug: boolean;
}

export class RouterDeliveriesReducer implements RouterDeliveriesView {
  readonly model: StateModel;
  #sawDebug = false;

  constructor(model: StateModel) {
    this.model = model;
  }

  get seesRouterDebug(): boolean {
    return this.#sawDebug;
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
    this.model.facts(obs.server).routerState = {
      ts: obs.ts,
      blockTableSize: obs.blockTableSize,
      activeRequests: obs.activeRequests,
      polls: obs.polls,
      pollFailures: obs.pollFailures,
    };
  }

  routerServerFact(obs: RouterServerFactObservation): void {
    const facts = this.model.facts(obs.server);
    if (obs.fact === 'polling-skipped') {
      facts.pollingSkipped = {
        routerTokensPerBlock: obs.routerTokensPerBlock,
        workerTokensPerBlock: obs.workerTokensPerBlock,
        divisible: obs.divisible,
      };
      return;
    }
    const c = this.model.counters;
    c.add(obs.ts, counterKey('eventMatchDiagCalls', obs.server));
    if (obs.totalMatch > 0) c.add(obs.ts, counterKey('eventMatchDiagTotalMatched', obs.server));
    if (obs.eventMatch > 0) c.add(obs.ts, counterKey('eventMatchDiagEventMatched', obs.server));
    facts.eventBlocks = obs.eventBlocks;
    facts.totalBlocks = obs.totalBlocks;
  }
}
