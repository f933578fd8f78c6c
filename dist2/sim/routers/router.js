export const ROUTER_TYPES = ['round_robin', 'load_balancing', 'kv_cache_aware', 'conversation'];
/** Active-request bookkeeping shared by the routers. */
export class ActiveCounts {
    #counts = new Map();
    constructor(servers) {
        for (const server of servers)
            this.#counts.set(server, 0);
    }
    get(server) {
        return this.#counts.get(server) ?? 0;
    }
    increment(server) {
        this.#counts.set(server, this.get(server) + 1);
    }
    decrement(server) {
        this.#counts.set(server, Math.max(this.get(server) - 1, 0));
    }
}
//# sourceMappingURL=router.js.map