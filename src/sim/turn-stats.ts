// The two numbers of the bug report (docs/design.md §1): cache hit = Σ cached_tokens / Σ input_tokens, and turn
// scatter = share of follow-up turns (turn ≥ 2) whose cached_tokens < 50% of input_tokens although an earlier
// turn of the same trajectory was served. Beside them, what a run tallies per turn and per decision.
import type { ClientTurnRecord } from './client.js';
import type { RouterDecisionRecord } from './orchestrator.js';

export interface TurnStatsSnapshot {
  readonly requests: number;
  readonly promptTokens: number;
  readonly cachedTokens: number;
  readonly cacheHitRatio: number;
  readonly followUpTurns: number;
  readonly scatteredTurns: number;
  readonly turnScatterRatio: number;
}

export class TurnStats {
  #requests = 0;
  #prompt = 0;
  #cached = 0;
  #followUps = 0;
  #scattered = 0;

  /** one served request; `earlierTurnServed` = a previous turn of its trajectory completed */
  add(promptTokens: number, cachedTokens: number, earlierTurnServed: boolean): void {
    this.#requests++;
    this.#prompt += promptTokens;
    this.#cached += cachedTokens;
    if (earlierTurnServed) {
      this.#followUps++;
      if (cachedTokens < 0.5 * promptTokens) this.#scattered++;
    }
  }

  snapshot(): TurnStatsSnapshot {
    return {
      requests: this.#requests,
      promptTokens: this.#prompt,
      cachedTokens: this.#cached,
      cacheHitRatio: this.#prompt === 0 ? 0 : this.#cached / this.#prompt,
      followUpTurns: this.#followUps,
      scatteredTurns: this.#scattered,
      turnScatterRatio: this.#followUps === 0 ? 0 : this.#scattered / this.#followUps,
    };
  }
}

/** Per-turn tallies the client reports: the two numbers, moved turns, output tokens. */
export class TurnTally {
  readonly stats = new TurnStats();
  readonly #lastServer = new Map<number, string>();
  movedTurns = 0;
  outputTokens = 0;

  add({ turn, result, trajectory }: ClientTurnRecord): void {
    this.stats.add(result.promptTokens, result.cachedTokens, turn > 0);
    const previous = this.#lastServer.get(trajectory.index);
    if (previous !== undefined && previous !== result.server) this.movedTurns++;
    if (turn + 1 >= trajectory.turns.length) this.#lastServer.delete(trajectory.index);
    else this.#lastServer.set(trajectory.index, result.server);
    this.outputTokens += trajectory.turns[turn]!.outputTokens;
  }
}

/** In-flight load across servers at each decision (mean per server, mean max − min spread). */
export class InflightStats {
  #inflightSum = 0;
  #spreadSum = 0;
  #decisions = 0;

  readonly #ids: readonly string[];

  constructor(ids: readonly string[]) {
    this.#ids = ids;
  }

  add(d: RouterDecisionRecord): void {
    let lo = Number.POSITIVE_INFINITY;
    let hi = 0;
    for (const id of this.#ids) {
      const n = d.inflight[id]!;
      this.#inflightSum += n;
      lo = Math.min(lo, n);
      hi = Math.max(hi, n);
    }
    this.#spreadSum += hi - lo;
    this.#decisions++;
  }

  get meanInflight(): number {
    return this.#decisions === 0 ? 0 : this.#inflightSum / this.#decisions / this.#ids.length;
  }

  get meanSpread(): number {
    return this.#decisions === 0 ? 0 : this.#spreadSum / this.#decisions;
  }
}
