// round_robin and load_balancing: routers that never look at the prompt.
import {
  ActiveCounts,
  type RouteDecision,
  type Router,
  type RouterServerState,
  type RouterSettings,
} from './router.js';

function plainState(servers: readonly string[], active: ActiveCounts): RouterServerState[] {
  return servers.map((server) => ({
    server,
    activeRequests: active.get(server),
    hashAlgo: null,
    blockTableSize: null,
    polls: 0,
    pollFailures: 0,
  }));
}

export class RoundRobinRouter implements Router {
  readonly settings: RouterSettings = {
    type: 'round_robin',
    tokensPerBlock: null,
    maxBatchSize: null,
    backfillBlockHashesOnFinish: null,
    pollOnFinish: null,
  };
  readonly servers: readonly string[];
  readonly #active: ActiveCounts;
  #next = 0;

  constructor(servers: readonly string[]) {
    this.servers = servers;
    this.#active = new ActiveCounts(servers);
  }

  route(): RouteDecision {
    const server = this.servers[this.#next % this.servers.length]!;
    this.#next++;
    this.#active.increment(server);
    return { server, candidates: null };
  }

  finish(server: string): void {
    this.#active.decrement(server);
  }

  state(): RouterServerState[] {
    return plainState(this.servers, this.#active);
  }
}

/** Least active requests; ties go to the first server in configuration order. */
export class LoadBalancingRouter implements Router {
  readonly settings: RouterSettings = {
    type: 'load_balancing',
    tokensPerBlock: null,
    maxBatchSize: null,
    backfillBlockHashesOnFinish: null,
    pollOnFinish: null,
  };
  readonly servers: readonly string[];
  readonly #active: ActiveCounts;

  constructor(servers: readonly string[]) {
    this.servers = servers;
    this.#active = new ActiveCounts(servers);
  }

  route(): RouteDecision {
    let best = this.servers[0]!;
    for (const server of this.servers) if (this.#active.get(server) < this.#active.get(best)) best = server;
    this.#active.increment(best);
    return { server: best, candidates: null };
  }

  finish(server: string): void {
    this.#active.decrement(server);
  }

  state(): RouterServerState[] {
    return plainState(this.servers, this.#active);
  }
}
