// round_robin and load_balancing: routers that never look at the prompt, only at how many requests each server has.
import { ActiveCounts } from './active-counts.js';
import type { RouteDecision, Router, RouterServerState, RouterSettings } from './router.js';

/** What the two share: no block size, no batch size, no events; active requests counted per server. */
abstract class PromptBlindRouter implements Router {
  readonly settings: RouterSettings;
  readonly servers: readonly string[];
  protected readonly active: ActiveCounts;

  constructor(type: 'round_robin' | 'load_balancing', servers: readonly string[]) {
    this.settings = {
      type,
      tokensPerBlock: null,
      maxBatchSize: null,
      backfillBlockHashesOnFinish: null,
      pollOnFinish: null,
    };
    this.servers = servers;
    this.active = new ActiveCounts(servers);
  }

  abstract route(): RouteDecision;

  finish(server: string): void {
    this.active.decrement(server);
  }

  state(): RouterServerState[] {
    return this.servers.map((server) => ({
      server,
      activeRequests: this.active.get(server),
      hashAlgo: null,
      blockTableSize: null,
      polls: 0,
      pollFailures: 0,
    }));
  }
}

export class RoundRobinRouter extends PromptBlindRouter {
  #next = 0;

  constructor(servers: readonly string[]) {
    super('round_robin', servers);
  }

  route(): RouteDecision {
    const server = this.servers[this.#next % this.servers.length]!;
    this.#next++;
    this.active.increment(server);
    return { server, candidates: null };
  }
}

/** Least active requests; ties go to the first server in configuration order. */
export class LoadBalancingRouter extends PromptBlindRouter {
  constructor(servers: readonly string[]) {
    super('load_balancing', servers);
  }

  route(): RouteDecision {
    let best = this.servers[0]!;
    for (const server of this.servers) if (this.active.get(server) < this.active.get(best)) best = server;
    this.active.increment(best);
    return { server: best, candidates: null };
  }
}
