// The router's tokens_per_block when no configuration source states it (relay mode without a router debug endpoint
// or orchestrator log). The router chunks prompts into blocks of TensorRT-LLM's default 32 tokens, of its
// TRTLLM_KVCACHE_AWARE_ROUTER_HASH_TOKENS_PER_BLOCK, or — newest versions, when unset — of the workers' block size
// (docs/trtllm-wire.md §1.4). The candidates are therefore 32 and every worker block size. Under each candidate the
// replica predicts the router's matches; the router's choices reveal which candidate it really uses: under the true
// one the chosen server is, far more often than chance, the server with the largest predicted match (load can send
// a request elsewhere now and then); under a wrong one predictions are 0 (the hashes live in another space) or
// ignored by the router. A candidate is locked once it has enough such decisions, beats chance clearly and beats
// every other candidate clearly. Pure and cheap: per decision, a few numbers per candidate.

export interface BlockSizeInferenceOptions {
  /** decisions with a positive predicted match under the candidate before it can be locked */
  readonly minDecisions: number;
  /** (agreements − chance) / decisions needed to lock: the router follows the candidate's matches this much above chance */
  readonly minExcessShare: number;
  /** the locked candidate's excess agreements must be at least this multiple of any other candidate's */
  readonly dominance: number;
}

export const DEFAULT_BLOCK_SIZE_INFERENCE: BlockSizeInferenceOptions = {
  minDecisions: 40,
  minExcessShare: 0.3,
  dominance: 3,
};

export interface BlockSizeCandidateStats {
  readonly tokensPerBlock: number;
  /** decisions where the candidate predicts a positive match on some server */
  readonly decisions: number;
  /** … where the chosen server is one with the largest predicted match */
  readonly agreements: number;
  /** Σ over those decisions of |servers with the largest match| / N: the agreements blind routing would give */
  readonly chance: number;
}

interface MutableStats {
  decisions: number;
  agreements: number;
  chance: number;
}

export class RouterBlockSizeInference {
  readonly #options: BlockSizeInferenceOptions;
  readonly #stats = new Map<number, MutableStats>();
  #inferred: number | null = null;

  constructor(options: Partial<BlockSizeInferenceOptions> = {}) {
    this.#options = { ...DEFAULT_BLOCK_SIZE_INFERENCE, ...options };
  }

  /** The locked tokens_per_block, null while the behaviour has not decided it. */
  get inferred(): number | null {
    return this.#inferred;
  }

  /** One decision under one candidate: predicted matched tokens per server and the index of the chosen server. */
  observe(tokensPerBlock: number, predicted: readonly number[], chosenIndex: number): void {
    let max = 0;
    for (const p of predicted) if (p > max) max = p;
    if (max <= 0 || chosenIndex < 0) return;
    let best = 0;
    for (const p of predicted) if (p === max) best++;
    let s = this.#stats.get(tokensPerBlock);
    if (s === undefined) {
      s = { decisions: 0, agreements: 0, chance: 0 };
      this.#stats.set(tokensPerBlock, s);
    }
    s.decisions++;
    s.chance += best / predicted.length;
    if (predicted[chosenIndex] === max) s.agreements++;
  }

  /** Locks a candidate when the evidence is clear (call after each decision's observe calls); returns the lock. */
  settle(): number | null {
    if (this.#inferred !== null) return this.#inferred;
    const o = this.#options;
    let lead: number | null = null;
    let leadExcess = 0;
    let runnerUpExcess = 0;
    for (const [tpb, s] of this.#stats) {
      const excess = s.agreements - s.chance;
      if (lead === null || excess > leadExcess) {
        if (lead !== null) runnerUpExcess = Math.max(runnerUpExcess, leadExcess);
        lead = tpb;
        leadExcess = excess;
      } else {
        runnerUpExcess = Math.max(runnerUpExcess, excess);
      }
    }
    if (lead === null) return null;
    const s = this.#stats.get(lead)!;
    if (s.decisions < o.minDecisions || leadExcess < o.minExcessShare * s.decisions) return null;
    if (runnerUpExcess > 0 && leadExcess < o.dominance * runnerUpExcess) return null;
    this.#inferred = lead;
    return lead;
  }

  /**
   * The candidate to predict with until one is locked: the one the router follows best so far, else the one
   * under which the replica predicts most matches, else `fallback`.
   */
  leader(candidates: readonly number[], fallback: number): number {
    if (this.#inferred !== null) return this.#inferred;
    let best = fallback;
    let bestKey: readonly [number, number] = [0, 0];
    for (const c of candidates) {
      const s = this.#stats.get(c);
      if (s === undefined) continue;
      const key = [Math.max(0, s.agreements - s.chance), s.decisions] as const;
      if (key[0] > bestKey[0] || (key[0] === bestKey[0] && key[1] > bestKey[1])) {
        best = c;
        bestKey = key;
      }
    }
    return best;
  }

  stats(): BlockSizeCandidateStats[] {
    return [...this.#stats.entries()]
      .sort(([a], [b]) => a - b)
      .map(([tokensPerBlock, s]) => ({ tokensPerBlock, ...s }));
  }
}
