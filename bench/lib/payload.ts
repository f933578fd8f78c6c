// Realistic `/kv_cache_events` poll responses of an attention-DP TensorRT-LLM CTX worker, written by the
// project's own TRT-LLM-compact serializer: per-rank event ids, `created` first, `stored` events of 128-token
// blocks chained to the cached prefix (real v1_block_key hashes, a partial tail block now and then), and
// `removed` batches when a rank's pool is full.
import { writeFileSync } from 'node:fs';
import { hashV1Block } from '../../src/core/hashing/index.js';
import type { KvEvent, StoredBlock } from '../../src/core/wire/kv-event.js';
import { serializeKvEvents } from '../../src/core/wire/serialize-kv-events.js';
import { scratchPath } from './paths.js';

export interface PayloadSpec {
  readonly totalBytes: number;
  readonly batchBytes: number;
  readonly ranks: number;
  readonly tokensPerBlock: number;
  /** blocks a rank holds before it evicts */
  readonly blocksPerRank: number;
  readonly seed: number;
}

export interface PayloadFiles {
  readonly files: string[];
  readonly bytes: number;
  readonly events: number;
  readonly storedBlocks: number;
  readonly removedHashes: number;
}

function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s;
  };
}

interface RankState {
  eventId: number;
  readonly resident: bigint[];
}

export function writePayload(name: string, spec: PayloadSpec): PayloadFiles {
  const next = lcg(spec.seed);
  const ranks: RankState[] = Array.from({ length: spec.ranks }, () => ({ eventId: 0, resident: [] }));
  const files: string[] = [];
  let bytes = 0;
  let events = 0;
  let storedBlocks = 0;
  let removedHashes = 0;
  let batch: KvEvent[] = [];
  let batchBytes = 2;
  const event = (rank: number, data: KvEvent['data']): KvEvent => ({
    eventId: ranks[rank]!.eventId++,
    data,
    windowSize: 4096,
    attentionDpRank: rank,
    hashAlgo: null,
    layerGroupId: null,
  });
  const push = (e: KvEvent): void => {
    batch.push(e);
    batchBytes += serializeKvEvents([e]).length - 1;
  };
  const flush = (): void => {
    if (batch.length === 0) return;
    const text = serializeKvEvents(batch);
    const file = scratchPath(`${name}-${String(files.length).padStart(4, '0')}.json`);
    writeFileSync(file, text);
    files.push(file);
    bytes += Buffer.byteLength(text);
    events += batch.length;
    batch = [];
    batchBytes = 2;
  };
  for (let r = 0; r < spec.ranks; r++)
    push(event(r, { type: 'created', numBlocksPerCacheLevel: [spec.blocksPerRank, 0] }));
  // a few shared system prompts per rank: requests extend one of them by new blocks (multi-turn growth)
  const sessions: { rank: number; tail: bigint }[] = [];
  while (bytes + batchBytes < spec.totalBytes) {
    const pick = next() % 8;
    let rank: number;
    let parent: bigint | null;
    if (pick < 5 && sessions.length > 0) {
      const s = sessions[next() % sessions.length]!;
      rank = s.rank;
      parent = s.tail;
    } else {
      rank = next() % spec.ranks;
      parent = null;
    }
    const blockCount = 1 + (next() % 8);
    const partialTail = next() % 4 === 0;
    const blocks: StoredBlock[] = [];
    let chainParent = parent ?? 0n;
    for (let b = 0; b < blockCount; b++) {
      const size = partialTail && b === blockCount - 1 ? 1 + (next() % (spec.tokensPerBlock - 1)) : spec.tokensPerBlock;
      const tokens = new Uint32Array(size);
      for (let t = 0; t < size; t++) tokens[t] = (next() >>> 8) % 152_064;
      const blockHash = hashV1Block(tokens, chainParent);
      blocks.push({
        blockHash,
        tokens,
        tokenExtraIds: null,
        cacheLevel: 0,
        priority: 35,
        mmKeys: [],
        cacheSalt: null,
        loraId: null,
      });
      chainParent = blockHash;
    }
    push(event(rank, { type: 'stored', parentHash: parent, blocks }));
    storedBlocks += blocks.length;
    const state = ranks[rank]!;
    for (const b of blocks) state.resident.push(b.blockHash as bigint);
    if (!partialTail) {
      sessions.push({ rank, tail: chainParent });
      if (sessions.length > 64) sessions.splice(next() % sessions.length, 1);
    }
    if (state.resident.length > spec.blocksPerRank) {
      // V1 batches consecutive removals of one window into one event; evict the oldest
      const evicted = state.resident.splice(0, state.resident.length - spec.blocksPerRank + (next() % 16));
      push(event(rank, { type: 'removed', blockHashes: evicted }));
      removedHashes += evicted.length;
    }
    if (batchBytes >= spec.batchBytes) flush();
  }
  flush();
  return { files, bytes, events, storedBlocks, removedHashes };
}
