// One request's prompt hashed into blocks once per hash algo: servers on the same algo share the hashing.
import type { HashAlgo } from '../../core/wire/kv-event.js';
import type { Prompt, PromptBlocks } from '../prompt.js';

export class PromptBlocksByAlgo {
  readonly #prompt: Prompt;
  readonly #tokensPerBlock: number;
  readonly #byAlgo = new Map<HashAlgo, PromptBlocks>();

  constructor(prompt: Prompt, tokensPerBlock: number) {
    this.#prompt = prompt;
    this.#tokensPerBlock = tokensPerBlock;
  }

  of(algo: HashAlgo): PromptBlocks {
    let blocks = this.#byAlgo.get(algo);
    if (blocks === undefined) {
      blocks = this.#prompt.blocks(this.#tokensPerBlock, algo);
      this.#byAlgo.set(algo, blocks);
    }
    return blocks;
  }
}
