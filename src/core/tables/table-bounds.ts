// The bound on the blocks one server's table holds, shared by worker truth and the router replica.
import { KvsentinelError } from '../errors.js';

/**
 * Default cap on the blocks one server's table holds (all ranks and streams together). A real worker holds at most
 * its GPU plus host block pools: tens of thousands of GPU blocks per rank, a few hundred thousand with host
 * offload, so 4 M is far above any server we know and costs at most ~100 MiB (12–24 bytes per block). The table only
 * reaches it when `removed` events were lost (a competing consumer, a backlog overflow).
 */
export const DEFAULT_MAX_TABLE_BLOCKS_PER_SERVER = 4_000_000;

export interface TableBounds {
  /** blocks one server may hold; past it an arbitrary held block is evicted per new one (counted) */
  readonly maxBlocksPerServer: number;
}

export function checkTableBounds(bounds: Partial<TableBounds>): TableBounds {
  const maxBlocksPerServer = bounds.maxBlocksPerServer ?? DEFAULT_MAX_TABLE_BLOCKS_PER_SERVER;
  if (!Number.isSafeInteger(maxBlocksPerServer) || maxBlocksPerServer < 1) {
    throw new KvsentinelError(
      'internal',
      `maxBlocksPerServer must be a positive integer, got ${String(maxBlocksPerServer)}`,
    );
  }
  return { maxBlocksPerServer };
}
