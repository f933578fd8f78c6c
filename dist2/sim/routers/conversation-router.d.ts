import { type RouteDecision, type RouteRequest, type Router, type RouterServerState, type RouterSettings } from './router.js';
export declare class ConversationRouter implements Router {
    #private;
    readonly settings: RouterSettings;
    readonly servers: readonly string[];
    constructor(servers: readonly string[]);
    route(request: RouteRequest): RouteDecision;
    finish(server: string, request: RouteRequest): void;
    state(): RouterServerState[];
}
