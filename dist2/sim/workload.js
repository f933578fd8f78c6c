import { ChainBuilder, driftToken } from './prompt.js';
import { Rng } from './rng.js';
/** The shared system prefix: the same token ids in every trajectory of a seed. */
export function systemPrefix(config) {
    const tokens = new Uint32Array(config.systemPrefixTokens);
    new Rng(config.seed, 0x5157).fillTokens(tokens, 100, config.vocabSize);
    return tokens;
}
function clampTokens(value, min, max) {
    return Math.max(min, Math.min(max, Math.round(value)));
}
export class Trajectory {
    index;
    correlationId;
    turns;
    taskTokens;
    #rng;
    #vocab;
    #tokens;
    #length;
    #chains = new Map();
    constructor(config, index, prefix) {
        this.index = index;
        this.correlationId = `traj-${config.seed}-${index}`;
        this.#rng = new Rng(config.seed, index + 1);
        this.#vocab = config.vocabSize;
        const rng = this.#rng;
        const turnCount = rng.int(config.turnsMin, config.turnsMax + 1);
        this.taskTokens = clampTokens(rng.logNormal(config.taskTokensMedian, config.taskTokensSigma), 16, 64_000);
        const turns = [];
        for (let t = 0; t < turnCount; t++) {
            const outputTokens = clampTokens(rng.logNormal(config.outputTokensMedian, config.outputTokensSigma), 8, 4096);
            const big = rng.next() < config.toolBigProbability;
            const toolDraw = big ? rng.logNormal(config.toolBigMedian, config.toolBigSigma) : rng.logNormal(config.toolTokensMedian, config.toolTokensSigma);
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
    get length() {
        return this.#length;
    }
    /** the prompt of the current turn */
    prompt() {
        return new TrajectoryPrompt(this, this.#length, false);
    }
    /** after turn `turn` (0-based): its output and tool result join the context */
    advance(turn) {
        const plan = this.turns[turn];
        this.#append(plan.outputTokens + plan.toolTokens);
    }
    tokens() {
        return this.#tokens;
    }
    chain(blockSize, algo, drift) {
        const key = `${blockSize}/${algo}/${drift ? 'd' : ''}`;
        let chain = this.#chains.get(key);
        if (chain === undefined) {
            chain = new ChainBuilder(blockSize, algo, drift);
            this.#chains.set(key, chain);
        }
        return chain;
    }
    #append(count) {
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
class TrajectoryPrompt {
    #trajectory;
    #length;
    #drift;
    #memo = new Map();
    #tokens = null;
    constructor(trajectory, length, drift) {
        this.#trajectory = trajectory;
        this.#length = length;
        this.#drift = drift;
    }
    get tokens() {
        if (this.#tokens === null) {
            const view = this.#trajectory.tokens().subarray(0, this.#length);
            if (this.#drift) {
                const copy = view.slice();
                if (copy.length > 0)
                    copy[0] = driftToken(copy[0]);
                this.#tokens = copy;
            }
            else {
                this.#tokens = view;
            }
        }
        return this.#tokens;
    }
    blocks(blockSize, algo) {
        const key = `${blockSize}/${algo}`;
        let blocks = this.#memo.get(key);
        if (blocks === undefined) {
            const chain = this.#trajectory.chain(blockSize, algo, this.#drift);
            blocks = chain.blocksOf(this.#trajectory.tokens(), Math.max(this.#length - 1, 0));
            this.#memo.set(key, blocks);
        }
        return blocks;
    }
    drifted() {
        return new TrajectoryPrompt(this.#trajectory, this.#length, true);
    }
}
//# sourceMappingURL=workload.js.map