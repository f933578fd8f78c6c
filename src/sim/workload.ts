// Closed-loop multi-turn agentic-coding trajectories. Every trajectory starts with the same system prefix
// (system prompt + tool definitions), then its task; each turn the model answers (output tokens, generated on
// GEN) and a tool result is appended (file reads, grep, test logs: heavy-tailed) before the next request.
// Content depends only on (seed, trajectory index), never on timing or routing, so every router sees the same
// token streams.
import type { HashAlgo } from '../core/wire/kv-event.js';
import { ChainBuilder, driftToken, type Prompt, type PromptBlocks } from './prompt.js';
import { Rng } from './rng.js';
import type { SectionOf, WORKLOAD_KNOBS } from './sim-knobs.js';

/** the workload's knobs (sim-knobs.ts) and the vocabulary its token ids are drawn from */
export type WorkloadConfig = SectionOf<typeof WORKLOAD_KNOBS> & { readonly vocabSize: number };

export const REQUEST_FORMATS = ['token-ids', 'text', 'chat', 'chat-turns'] as const;

export interface TurnPlan {
  readonly outputTokens: number;
  /** tool result appended after this turn (0 after the last) */
  readonly toolTokens: number;
  /** tool execution time before the next turn */
  readonly toolMs: number;
}

/** The shared system prefix: the same token ids in every trajectory of a seed. */
export function systemPrefix(config: WorkloadConfig): Uint32Array {
  const tokens = new Uint32Array(config.systemPrefixTokens);
  new Rng(config.seed, 0x5157).fillTokens(tokens, 100, config.vocabSize);
  return tokens;
}

function clampTokens(value: number, min: number, max: number): number {
  return Math.max(min, Math.min(max, Math.round(value)));
}

export class Trajectory {
  readonly index: number;
  readonly correlationId: string;
  readonly turns: readonly TurnPlan[];
  readonly taskTokens: number;
  readonly #rng: Rng;
  readonly #vocab: number;
  #tokens: Uint32Array;
  #length: number;
  readonly #chains = new Map<string, ChainBuilder>();

  constructor(config: WorkloadConfig, index: number, prefix: Uint32Array) {
    this.index = index;
    this.correlationId = `traj-${config.seed}-${index}`;
    this.#rng = new Rng(config.seed, index + 1);
    this.#vocab = config.vocabSize;
    const rng = this.#rng;
    const turnCount = rng.int(config.turnsMin, config.turnsMax + 1);
    this.taskTokens = clampTokens(rng.logNormal(config.taskTokensMedian, config.taskTokensSigma), 16, 64_000);
    const turns: TurnPlan[] = [];
    for (let t = 0; t < turnCount; t++) {
      const outputTokens = clampTokens(rng.logNormal(config.outputTokensMedian, config.outputTokensSigma), 8, 4096);
      const big = rng.next() < config.toolBigProbability;
      const toolDraw = big
        ? rng.logNormal(config.toolBigMedian, config.toolBigSigma)
        : rng.logNormal(config.toolTokensMedian, config.toolTokensSigma);
      const toolTokens = t === turnCount - 1 ? 0 : clampTokens(toolDraw, 16, config.toolTokensMax);
      const toolMs = config.toolLatencyMs > 0 ? rng.exponential(config.toolLatencyMs) : 0;
      turns.push({ outputTokens, toolTokens, toolMs });
    }
    this.turns = turns;
    this.#tokens = new Uint32Array(prefix.length + this.taskTokens + 4096);
    this.#tokens.set(prefix);
    this.#length = prefix.length;
    this.#append(this.taskTokens);
  }

  get length(): number {
    return this.#length;
  }

  /** the prompt of the current turn */
  prompt(): Prompt {
    return new TrajectoryPrompt(this, this.#length, false);
  }

  /** after turn `turn` (0-based): its output and tool result join the context */
  advance(turn: number): void {
    const plan = this.turns[turn]!;
    this.#append(plan.outputTokens + plan.toolTokens);
  }

  tokens(): Uint32Array {
    return this.#tokens;
  }

  chain(blockSize: number, algo: HashAlgo, drift: boolean): ChainBuilder {
    const key = `${blockSize}/${algo}/${drift ? 'd' : ''}`;
    let chain = this.#chains.get(key);
    if (chain === undefined) {
      chain = new ChainBuilder(blockSize, algo, drift);
      this.#chains.set(key, chain);
    }
    return chain;
  }

  #append(count: number): void {
    const needed = this.#length + count;
    if (needed > this.#tokens.length) {
      const grown = new Uint32Array(Math.max(needed, this.#tokens.length * 2));
      grown.set(this.#tokens.subarray(0, this.#length));
      this.#tokens = grown;
    }
    this.#rng.fillTokens(this.#tokens.subarray(this.#length, needed), 100, this.#vocab);
    this.#length = needed;
  }
}

class TrajectoryPrompt implements Prompt {
  readonly #trajectory: Trajectory;
  readonly #length: number;
  readonly #drift: boolean;
  readonly #memo = new Map<string, PromptBlocks>();
  #tokens: Uint32Array | null = null;

  constructor(trajectory: Trajectory, length: number, drift: boolean) {
    this.#trajectory = trajectory;
    this.#length = length;
    this.#drift = drift;
  }

  get tokens(): Uint32Array {
    if (this.#tokens === null) {
      const view = this.#trajectory.tokens().subarray(0, this.#length);
      if (this.#drift) {
        const copy = view.slice();
        if (copy.length > 0) copy[0] = driftToken(copy[0]!);
        this.#tokens = copy;
      } else {
        this.#tokens = view;
      }
    }
    return this.#tokens;
  }

  blocks(blockSize: number, algo: HashAlgo): PromptBlocks {
    const key = `${blockSize}/${algo}`;
    let blocks = this.#memo.get(key);
    if (blocks === undefined) {
      const chain = this.#trajectory.chain(blockSize, algo, this.#drift);
      blocks = chain.blocksOf(this.#trajectory.tokens(), Math.max(this.#length - 1, 0));
      this.#memo.set(key, blocks);
    }
    return blocks;
  }

  drifted(): Prompt {
    return new TrajectoryPrompt(this.#trajectory, this.#length, true);
  }

  release(): void {
    this.#memo.clear();
    this.#tokens = null;
  }
}
