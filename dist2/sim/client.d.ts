import type { Orchestrator, TurnResult } from './orchestrator.js';
import type { Scheduler } from './scheduler.js';
import { Trajectory, type WorkloadConfig } from './workload.js';
export interface ClientTurnRecord {
    readonly trajectory: Trajectory;
    /** 0-based turn */
    readonly turn: number;
    readonly result: TurnResult;
}
export interface ClientHooks {
    onTurn?(record: ClientTurnRecord): void;
    onTrajectoryDone?(done: number, total: number): void;
    onIdle?(): void;
}
export declare class ClosedLoopClient {
    #private;
    constructor(scheduler: Scheduler, config: WorkloadConfig, orchestrator: Orchestrator, hooks?: ClientHooks);
    get finished(): boolean;
    get completedTrajectories(): number;
    start(): void;
}
