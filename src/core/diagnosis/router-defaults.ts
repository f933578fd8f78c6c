// What the diagnosis assumes of the router when its settings were never observed: TensorRT-LLM's defaults
// (docs/trtllm-wire.md §1.4). The state's joins and the rules read the same numbers.
export const DEFAULT_ROUTER_TOKENS_PER_BLOCK = 32;
export const DEFAULT_ROUTER_MAX_BATCH_SIZE = 64;
/** the newest router's load_weight default (score = matches/tokens_per_block − load_weight·active) */
export const NEWEST_LOAD_WEIGHT = 0.25;
