import type { Observation } from '../core/observe/observation.js';
import type { KvEvent } from '../core/wire/kv-event.js';
import type { CtxWorker } from './ctx-worker.js';
import type { Scheduler } from './scheduler.js';
export declare class RelayModel {
    #private;
    readonly server: string;
    constructor(worker: CtxWorker, scheduler: Scheduler, emit: (observation: Observation) => void, maxBacklog?: number);
    /** next relay sequence number */
    get seq(): number;
    /** drains the worker (throws while it is down) and records what arrived */
    pull(): void;
    /** a consumer's POST /kv_cache_events on the relay port */
    serve(consumer: string): KvEvent[];
    /** registers a consumer from the current position (it sees everything drained from now on) */
    attach(consumer: string): void;
}
