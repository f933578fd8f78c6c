// The router's tokens_per_block as kvsentinel knows it: the size, and how it is known. One value for the router's
// settings (deployment facts), the state's chunking and the diagnosis; findings and the report name `from`.
import type { RouterConfigObservation } from '../observe/observation.js';
import { DEFAULT_ROUTER_TOKENS_PER_BLOCK } from './router-defaults.js';

/**
 * 'declared': the operator's configuration states it; 'logged': the router states it (its log, its debug
 * endpoint, the simulator); 'adopted': the newest router logged that it took a worker's size; 'inferred':
 * kvsentinel reads it from the router's routing, no source stating it.
 */
export type RouterBlockSizeBasis = 'declared' | 'logged' | 'adopted' | 'inferred';

export interface RouterBlockSize {
  readonly tokens: number;
  readonly basis: RouterBlockSizeBasis;
  /** the stating source ('config', 'orchestrator-log', 'debug-endpoint', 'simulator'), or 'inferred' */
  readonly from: string;
}

/** The size a router-config states, or null when it states none. */
export function statedRouterBlockSize(obs: RouterConfigObservation): RouterBlockSize | null {
  if (obs.tokensPerBlock === null) return null;
  const basis = obs.source === 'config' ? 'declared' : obs.tokensPerBlockAdopted === true ? 'adopted' : 'logged';
  return { tokens: obs.tokensPerBlock, basis, from: obs.source };
}

export function inferredRouterBlockSize(tokens: number): RouterBlockSize {
  return { tokens, basis: 'inferred', from: 'inferred' };
}

/** The chunk size the router uses as far as known: the size, else TensorRT-LLM's default. */
export function routerChunkSize(size: RouterBlockSize | null): number {
  return size?.tokens ?? DEFAULT_ROUTER_TOKENS_PER_BLOCK;
}
