// What each worker can hold, as far as the state knows it, and what it stored: the bound of the sticky ideal
// (outcomes-reducer.ts). A follow-up turn that left its server could have reused its earlier turn there only while
// that server had not since stored as many new tokens as it holds: past that its LRU cache evicted the turn.
// Capacity, in blocks over every cache level the engine reuses from (GPU and host) and every attention-DP rank, from
// the first source that states it: the operator's configuration (`kv_capacity_blocks`), the worker's `created`
// event (num_blocks_per_cache_level), or the most blocks its table held once it started evicting (removed events).
// TensorRT-LLM's /server_info and Prometheus metrics state no capacity, and /metrics (iteration stats with
// kvCacheStats.maxNumBlocks) drains what the Prometheus collector reads, so the sidecar never polls it.
import type { KvEvent } from '../wire/kv-event.js';

export type CapacitySource = 'configuration' | 'created event' | 'observed peak residency';

export interface WorkerCapacityView {
  readonly blocks: number;
  readonly from: CapacitySource;
}

interface ServerCapacity {
  configured: number | null;
  /** the last `created` event of each rank: its blocks over all cache levels */
  readonly createdByRank: Map<number, number>;
  peakResident: number;
  removals: number;
  /** tokens the worker computed and stored (prompt − cached of every served request), since start */
  allocatedTokens: number;
}

export class WorkerCapacity {
  readonly #servers = new Map<string, ServerCapacity>();

  /** The operator's stated capacity (blocks); null clears it. */
  configure(server: string, blocks: number | null): void {
    this.#server(server).configured = blocks !== null && blocks > 0 ? blocks : null;
  }

  /** A drained or streamed event of `server`, and its table's size after it. */
  observeEvent(server: string, event: KvEvent): void {
    const data = event.data;
    if (data.type === 'created') {
      const blocks = data.numBlocksPerCacheLevel.reduce((n, b) => n + Math.max(0, b), 0);
      if (blocks > 0) this.#server(server).createdByRank.set(event.attentionDpRank ?? 0, blocks);
    } else if (data.type === 'removed' && data.blockHashes.length > 0) {
      this.#server(server).removals++;
    }
  }

  observeResidency(server: string, blocks: number): void {
    const s = this.#server(server);
    if (blocks > s.peakResident) s.peakResident = blocks;
  }

  /** A served request stored what it did not reuse. */
  observeServed(server: string, promptTokens: number, cachedTokens: number): void {
    this.#server(server).allocatedTokens += Math.max(0, promptTokens - cachedTokens);
  }

  allocatedTokens(server: string): number {
    return this.#servers.get(server)?.allocatedTokens ?? 0;
  }

  of(server: string): WorkerCapacityView | null {
    const s = this.#servers.get(server);
    if (s === undefined) return null;
    if (s.configured !== null) return { blocks: s.configured, from: 'configuration' };
    if (s.createdByRank.size > 0) {
      let blocks = 0;
      for (const b of s.createdByRank.values()) blocks += b;
      return { blocks, from: 'created event' };
    }
    // before any eviction the table has not been full: what it held says nothing of what it can hold
    if (s.removals > 0 && s.peakResident > 0) return { blocks: s.peakResident, from: 'observed peak residency' };
    return null;
  }

  #server(server: string): ServerCapacity {
    let s = this.#servers.get(server);
    if (s === undefined) {
      s = { configured: null, createdByRank: new Map(), peakResident: 0, removals: 0, allocatedTokens: 0 };
      this.#servers.set(server, s);
    }
    return s;
  }
}
