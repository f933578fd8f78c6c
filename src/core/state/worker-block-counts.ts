// Counts a source gives in the worker's KV blocks (a perf-metrics request log: num_total_allocated_blocks,
// num_reused_blocks) become tokens here, with the server's block size as the state knows it when it applies them
// (its /server_info, or the router's log of the worker's size): no source needs another source's facts. An unknown
// size leaves the counts unknown, as an entry without blocks does.
import type { Observation } from '../observe/observation.js';

function tokensOf(blocks: number | null | undefined, blockSize: number | null): number | null {
  return blocks === null || blocks === undefined || blockSize === null ? null : blocks * blockSize;
}

/** what the state knows of the workers' block sizes (DeploymentFacts) */
export interface WorkerBlockSizes {
  advertisedBlockSize(server: string): number | null;
}

/** The observation in tokens, without its block counts; any other observation as it is. */
export function inTokens(obs: Observation, sizes: WorkerBlockSizes): Observation {
  if (obs.kind === 'decision') {
    if (obs.promptBlocks === undefined) return obs;
    const { promptBlocks, ...decision } = obs;
    return {
      ...decision,
      promptTokenCount: decision.promptTokenCount ?? tokensOf(promptBlocks, sizes.advertisedBlockSize(obs.server)),
    };
  }
  if (obs.kind === 'outcome') {
    if (obs.promptBlocks === undefined && obs.cachedBlocks === undefined) return obs;
    const { promptBlocks, cachedBlocks, ...outcome } = obs;
    const size = sizes.advertisedBlockSize(obs.server);
    return {
      ...outcome,
      promptTokens: outcome.promptTokens ?? tokensOf(promptBlocks, size),
      cachedTokens: outcome.cachedTokens ?? tokensOf(cachedBlocks, size),
    };
  }
  return obs;
}
