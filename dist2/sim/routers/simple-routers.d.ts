import { type RouteDecision, type Router, type RouterServerState, type RouterSettings } from './router.js';
export declare class RoundRobinRouter implements Router {
    #private;
    readonly settings: RouterSettings;
    readonly servers: readonly string[];
    constructor(servers: readonly string[]);
    route(): RouteDecision;
    finish(server: string): void;
    state(): RouterServerState[];
}
/** Least active requests; ties go to the first server in configuration order. */
export declare class LoadBalancingRouter implements Router {
    #private;
    readonly settings: RouterSettings;
    readonly servers: readonly string[];
    constructor(servers: readonly string[]);
    route(): RouteDecision;
    finish(server: string): void;
    state(): RouterServerState[];
}
