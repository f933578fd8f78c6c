// The two numbers of the bug report (docs/design.md §1): cache hit = Σ cached_tokens / Σ input_tokens, and turn
// scatter = share of follow-up turns (turn ≥ 2) whose cached_tokens < 50% of input_tokens although an earlier
// turn of the same trajectory was served.

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
