// round_robin and load_balancing: routers that never look at the prompt.
import { ActiveCounts } from './router.js';
function plainState(servers, active) {
    return servers.map((server) => ({ server, activeRequests: active.get(server), hashAlgo: null, blockTableSize: null, polls: 0, pollFailures: 0 }));
}
export class RoundRobinRouter {
    settings = { type: 'round_robin', tokensPerBlock: null, maxBatchSize: null, backfillBlockHashesOnFinish: null, pollOnFinish: null };
    servers;
    #active;
    #next = 0;
    constructor(servers) {
        this.servers = servers;
        this.#active = new ActiveCounts(servers);
    }
    route() {
        const server = this.servers[this.#next % this.servers.length];
        this.#next++;
        this.#active.increment(server);
        return { server, candidates: null };
    }
    finish(server) {
        this.#active.decrement(server);
    }
    state() {
        return plainState(this.servers, this.#active);
    }
}
/** Least active requests; ties go to the first server in configuration order. */
export class LoadBalancingRouter {
    settings = { type: 'load_balancing', tokensPerBlock: null, maxBatchSize: null, backfillBlockHashesOnFinish: null, pollOnFinish: null };
    servers;
    #active;
    constructor(servers) {
        this.servers = servers;
        this.#active = new ActiveCounts(servers);
    }
    route() {
        let best = this.servers[0];
        for (const server of this.servers)
            if (this.#active.get(server) < this.#active.get(best))
                best = server;
        this.#active.increment(best);
        return { server: best, candidates: null };
    }
    finish(server) {
        this.#active.decrement(server);
    }
    state() {
        return plainState(this.servers, this.#active);
    }
}
//# sourceMappingURL=simple-routers.js.map