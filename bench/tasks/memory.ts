// Child task: build one block table of N distinct 64-bit keys and report what it retains (heap + array buffers
// after a full GC, and RSS growth), so each structure is measured alone in a fresh process.
import { RouterReplicaTable, U64HashSet, WorkerTruthTable } from '../../src/core/tables/index.js';
import type { KvEvent, StoredBlock } from '../../src/core/wire/kv-event.js';
import { gc, retained } from '../lib/heap.js';

export type MemoryStructure = 'u64-hash-set' | 'router-replica' | 'worker-truth' | 'js-set-bigint';

export interface MemoryParams {
  readonly structure: MemoryStructure;
  readonly blocks: number;
}

export interface MemoryResult {
  readonly blocks: number;
  /** growth of heapUsed + arrayBuffers after full GCs, per block */
  readonly retainedBytesPerBlock: number;
  /** growth of RSS, per block */
  readonly rssBytesPerBlock: number;
  readonly buildSeconds: number;
}

/** xorshift128 over 32-bit halves: well-spread distinct-enough keys without allocating BigInts. */
function keyStream(seed: number): (out: Uint32Array) => void {
  let a = seed | 1;
  let b = 0x9e3779b9;
  let c = 0x243f6a88;
  let d = 0xb7e15162;
  return (out) => {
    for (let i = 0; i < 2; i++) {
      const t = a ^ (a << 11);
      a = b;
      b = c;
      c = d;
      d = (d ^ (d >>> 19) ^ (t ^ (t >>> 8))) >>> 0;
      out[i] = d;
    }
  };
}

/** Applies `stored` events of up to 32 fresh blocks to server ctx0 of `table` until it holds `n` blocks. */
function fillWithStoredEvents(
  table: { apply(server: string, event: KvEvent): unknown; blockCount(server: string): number },
  n: number,
  nextHash: () => bigint,
): void {
  const tokens = new Uint32Array(0);
  while (table.blockCount('ctx0') < n) {
    const blocks: StoredBlock[] = [];
    const want = Math.min(32, n - table.blockCount('ctx0'));
    for (let i = 0; i < want; i++) {
      blocks.push({
        blockHash: nextHash(),
        tokens,
        tokenExtraIds: null,
        cacheLevel: 0,
        priority: 35,
        mmKeys: [],
        cacheSalt: null,
        loraId: null,
      });
    }
    const event: KvEvent = {
      eventId: null,
      data: { type: 'stored', parentHash: null, blocks },
      windowSize: 4096,
      attentionDpRank: 0,
      hashAlgo: null,
      layerGroupId: null,
    };
    table.apply('ctx0', event);
  }
}

function build(params: MemoryParams): { keep: unknown; size: () => number } {
  const next = keyStream(params.blocks);
  const halves = new Uint32Array(2);
  const n = params.blocks;
  switch (params.structure) {
    case 'u64-hash-set': {
      const set = new U64HashSet();
      while (set.size < n) {
        next(halves);
        set.addHalves(halves[0]!, halves[1]!);
      }
      return { keep: set, size: () => set.size };
    }
    case 'router-replica':
    case 'worker-truth': {
      // stored events as the router receives them, 32 blocks per event; the tables' per-server cap (an operational
      // bound, 4 M blocks by default) is raised to the measured size, or the fill would evict and never end
      const table =
        params.structure === 'router-replica'
          ? new RouterReplicaTable({ maxBlocksPerServer: n })
          : new WorkerTruthTable({ maxBlocksPerServer: n });
      fillWithStoredEvents(table, n, () => {
        next(halves);
        return (BigInt(halves[0]!) << 32n) | BigInt(halves[1]!);
      });
      return { keep: table, size: () => table.blockCount('ctx0') };
    }
    case 'js-set-bigint': {
      const set = new Set<bigint>();
      while (set.size < n) {
        next(halves);
        set.add((BigInt(halves[0]!) << 32n) | BigInt(halves[1]!));
      }
      return { keep: set, size: () => set.size };
    }
  }
}

export function runMemory(params: MemoryParams): MemoryResult {
  gc();
  const before = retained();
  const rssBefore = process.memoryUsage().rss;
  const start = performance.now();
  const built = build(params);
  const buildSeconds = (performance.now() - start) / 1000;
  gc();
  const after = retained();
  const rssAfter = process.memoryUsage().rss;
  if (built.size() !== params.blocks)
    throw new Error(`${params.structure} holds ${built.size()} blocks, wanted ${params.blocks}`);
  return {
    blocks: params.blocks,
    retainedBytesPerBlock: (after - before) / params.blocks,
    rssBytesPerBlock: (rssAfter - rssBefore) / params.blocks,
    buildSeconds,
  };
}
