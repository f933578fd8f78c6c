import { Rng } from './rng.js';
import { systemPrefix, Trajectory } from './workload.js';
const RETRY_DELAY_MS = 1000;
export class ClosedLoopClient {
    #scheduler;
    #config;
    #orchestrator;
    #hooks;
    #prefix;
    #timing;
    #nextTrajectory = 0;
    #done = 0;
    #activeSlots = 0;
    #requestSeq = 0;
    constructor(scheduler, config, orchestrator, hooks = {}) {
        this.#scheduler = scheduler;
        this.#config = config;
        this.#orchestrator = orchestrator;
        this.#hooks = hooks;
        this.#prefix = systemPrefix(config);
        this.#timing = new Rng(config.seed, 0x7115);
    }
    get finished() {
        return this.#done >= this.#config.trajectories;
    }
    get completedTrajectories() {
        return this.#done;
    }
    start() {
        const slots = Math.min(this.#config.concurrency, this.#config.trajectories);
        for (let slot = 0; slot < slots; slot++) {
            this.#activeSlots++;
            const offset = this.#config.rampMs * this.#timing.next();
            this.#scheduler.at(this.#scheduler.now() + offset, () => this.#startNext());
        }
    }
    #startNext() {
        if (this.#nextTrajectory >= this.#config.trajectories) {
            this.#activeSlots--;
            if (this.#activeSlots === 0)
                this.#hooks.onIdle?.();
            return;
        }
        const trajectory = new Trajectory(this.#config, this.#nextTrajectory++, this.#prefix);
        this.#runTurn(trajectory, 0);
    }
    #runTurn(trajectory, turn) {
        const plan = trajectory.turns[turn];
        const requestId = `chatcmpl-${(++this.#requestSeq).toString(16).padStart(8, '0')}`;
        this.#orchestrator.send({ requestId, correlationId: trajectory.correlationId, prompt: trajectory.prompt(), outputTokens: plan.outputTokens }, (result) => {
            if (!result.ok) {
                this.#scheduler.at(this.#scheduler.now() + RETRY_DELAY_MS, () => this.#runTurn(trajectory, turn));
                return;
            }
            this.#hooks.onTurn?.({ trajectory, turn, result });
            if (turn + 1 >= trajectory.turns.length) {
                this.#done++;
                this.#hooks.onTrajectoryDone?.(this.#done, this.#config.trajectories);
                this.#startNext();
                return;
            }
            this.#scheduler.at(this.#scheduler.now() + plan.toolMs, () => {
                trajectory.advance(turn);
                this.#runTurn(trajectory, turn + 1);
            });
        });
    }
}
//# sourceMappingURL=client.js.map