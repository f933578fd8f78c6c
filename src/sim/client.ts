// The benchmark client: c closed-loop slots, each running trajectories one after another; a turn's next
// request leaves when the previous response arrived and the tool ran. A failed request is retried.
import type { Orchestrator, TurnResult } from './orchestrator.js';
import { Rng } from './rng.js';
import type { Scheduler } from './scheduler.js';
import { systemPrefix, Trajectory, type WorkloadConfig } from './workload.js';

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

const RETRY_DELAY_MS = 1000;

export class ClosedLoopClient {
  readonly #scheduler: Scheduler;
  readonly #config: WorkloadConfig;
  readonly #orchestrator: Orchestrator;
  readonly #hooks: ClientHooks;
  readonly #prefix: Uint32Array;
  readonly #timing: Rng;
  #nextTrajectory = 0;
  #done = 0;
  #activeSlots = 0;
  #requestSeq = 0;

  constructor(scheduler: Scheduler, config: WorkloadConfig, orchestrator: Orchestrator, hooks: ClientHooks = {}) {
    this.#scheduler = scheduler;
    this.#config = config;
    this.#orchestrator = orchestrator;
    this.#hooks = hooks;
    this.#prefix = systemPrefix(config);
    this.#timing = new Rng(config.seed, 0x7115);
  }

  get finished(): boolean {
    return this.#done >= this.#config.trajectories;
  }

  get completedTrajectories(): number {
    return this.#done;
  }

  start(): void {
    const slots = Math.min(this.#config.concurrency, this.#config.trajectories);
    for (let slot = 0; slot < slots; slot++) {
      this.#activeSlots++;
      const offset = this.#config.rampMs * this.#timing.next();
      this.#scheduler.at(this.#scheduler.now() + offset, () => this.#startNext());
    }
  }

  #startNext(): void {
    if (this.#nextTrajectory >= this.#config.trajectories) {
      this.#activeSlots--;
      if (this.#activeSlots === 0) this.#hooks.onIdle?.();
      return;
    }
    const trajectory = new Trajectory(this.#config, this.#nextTrajectory++, this.#prefix);
    this.#runTurn(trajectory, 0);
  }

  #runTurn(trajectory: Trajectory, turn: number): void {
    const plan = trajectory.turns[turn]!;
    const requestId = `chatcmpl-${(++this.#requestSeq).toString(16).padStart(8, '0')}`;
    this.#orchestrator.send(
      {
        requestId,
        correlationId: trajectory.correlationId,
        prompt: trajectory.prompt(),
        outputTokens: plan.outputTokens,
      },
      (result) => {
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
      },
    );
  }
}
