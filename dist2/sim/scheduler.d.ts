export interface Scheduler {
    /** current time in milliseconds (virtual: since the start of the run) */
    now(): number;
    /** runs `task` at `timeMs` (never earlier than now); tasks at the same time run in scheduling order */
    at(timeMs: number, task: () => void): void;
}
/** Discrete-event scheduler: time jumps from one task to the next. */
export declare class VirtualScheduler implements Scheduler {
    #private;
    now(): number;
    at(timeMs: number, task: () => void): void;
    after(delayMs: number, task: () => void): void;
    get pending(): number;
    /** runs one task; false when nothing is scheduled */
    step(): boolean;
    /** runs tasks until none is left or the next one is later than `untilMs` */
    run(untilMs?: number): void;
}
