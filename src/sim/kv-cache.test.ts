import { describe, expect, it } from 'vitest';
import { wireHashBlocks } from '../core/hashing/index.js';
import type { KvEventData } from '../core/wire/kv-event.js';
import { RankCache } from './kv-cache.js';
import { StaticPrompt } from './prompt.js';

function seq(start: number, count: number): Uint32Array {
  return Uint32Array.from({ length: count }, (_, i) => start + i);
}

function cacheWith(gpuBlocks: number, hostBlocks: number): { cache: RankCache; events: KvEventData[] } {
  const events: KvEventData[] = [];
  return { cache: new RankCache({ gpuBlocks, hostBlocks, emit: (e) => events.push(e) }), events };
}

// prompts with block size 4: tokens[0, L-1) are stored, so L = 4k + 1 gives k full blocks
function serve(cache: RankCache, tokens: Uint32Array): number {
  const prompt = new StaticPrompt(tokens);
  return cache.serve(prompt.blocks(4, 'v1_block_key'), prompt.tokens).reusedBlocks;
}

describe('RankCache', () => {
  it('stores every block of tokens[0, L-1) including the partial tail, with exact chained hashes', () => {
    const { cache, events } = cacheWith(100, 0);
    const tokens = seq(1, 11); // hashed: 1..10 → [1,2,3,4] [5,6,7,8] [9,10]
    serve(cache, tokens);
    expect(events).toHaveLength(1);
    const stored = events[0]!;
    if (stored.type !== 'stored') throw new Error('expected stored');
    expect(stored.parentHash).toBeNull();
    expect(stored.blocks.map((b) => Array.from(b.tokens))).toEqual([
      [1, 2, 3, 4],
      [5, 6, 7, 8],
      [9, 10],
    ]);
    expect(stored.blocks.map((b) => b.blockHash)).toEqual(
      wireHashBlocks(
        [
          [1, 2, 3, 4],
          [5, 6, 7, 8],
          [9, 10],
        ],
        'v1_block_key',
      ),
    );
    expect(stored.blocks.every((b) => b.cacheLevel === 0 && b.priority === 35)).toBe(true);
    expect(stored.blocks[0]!.blockHash).toBe(924206229973855n);
  });

  it('reuses the longest cached prefix of whole blocks and stores only the new blocks with their parent', () => {
    const { cache, events } = cacheWith(100, 0);
    serve(cache, seq(1, 9)); // blocks [1..4] [5..8]
    events.length = 0;
    const reused = serve(cache, seq(1, 14)); // [1..4] [5..8] [9..12] [13]
    expect(reused).toBe(2);
    const stored = events[0]!;
    if (stored.type !== 'stored') throw new Error('expected stored');
    expect(stored.blocks.map((b) => Array.from(b.tokens))).toEqual([[9, 10, 11, 12], [13]]);
    expect(stored.parentHash).toBe(
      wireHashBlocks(
        [
          [1, 2, 3, 4],
          [5, 6, 7, 8],
        ],
        'v1_block_key',
      )[1],
    );
  });

  it('never reuses a partial tail block', () => {
    const { cache } = cacheWith(100, 0);
    serve(cache, seq(1, 7)); // [1..4] [5,6]
    expect(serve(cache, seq(1, 7))).toBe(1);
  });

  it('evicts least recently used blocks, deepest first, and batches removals', () => {
    const { cache, events } = cacheWith(4, 0);
    serve(cache, seq(1, 9)); // A: a1 a2
    serve(cache, seq(101, 9)); // B: b1 b2 (full: 4 blocks)
    events.length = 0;
    serve(cache, seq(1, 9)); // touch A: A most recent
    expect(events).toEqual([]);
    serve(cache, seq(201, 9)); // C needs 2 blocks: B goes, deepest first, in one removed event
    const [bHash1, bHash2] = wireHashBlocks(
      [
        [101, 102, 103, 104],
        [105, 106, 107, 108],
      ],
      'v1_block_key',
    );
    expect(events[0]).toEqual({ type: 'removed', blockHashes: [bHash2, bHash1] });
    expect(events[1]!.type).toBe('stored');
    expect(cache.has(bHash1 as bigint)).toBe(false);
    expect(serve(cache, seq(1, 9))).toBe(2);
  });

  it('offloads to the host tier with an updated event and onboards on reuse', () => {
    const { cache, events } = cacheWith(2, 10);
    serve(cache, seq(1, 9)); // a1 a2 on GPU
    events.length = 0;
    serve(cache, seq(101, 9)); // b1 b2: a1 a2 offloaded
    const updates = events.filter((e) => e.type === 'updated');
    expect(updates).toHaveLength(2);
    expect(updates[0]).toMatchObject({
      type: 'updated',
      cacheLevel: { newValue: 1, oldValue: 0 },
      priority: { newValue: 35, oldValue: 35 },
    });
    const [a1] = wireHashBlocks([[1, 2, 3, 4]], 'v1_block_key');
    expect(cache.levelOf(a1 as bigint)).toBe(1);
    expect(cache.gpuSize).toBe(2);
    expect(cache.hostSize).toBe(2);
    events.length = 0;
    expect(serve(cache, seq(1, 9))).toBe(2); // host blocks still count as cached
    expect(
      events.some((e) => e.type === 'updated' && e.cacheLevel?.newValue === 0 && e.cacheLevel.oldValue === 1),
    ).toBe(true);
    expect(cache.levelOf(a1 as bigint)).toBe(0);
  });

  it('removes from the host tier when both tiers are full', () => {
    const { cache, events } = cacheWith(2, 2);
    serve(cache, seq(1, 9));
    serve(cache, seq(101, 9));
    events.length = 0;
    serve(cache, seq(201, 9));
    const removedHashes = events.flatMap((e) => (e.type === 'removed' ? e.blockHashes : []));
    expect(removedHashes).toEqual(
      wireHashBlocks(
        [
          [1, 2, 3, 4],
          [5, 6, 7, 8],
        ],
        'v1_block_key',
      ).reverse(),
    );
    expect(cache.size).toBe(4);
    // every event about a block comes after (or in) the event that stored it
    expect(events.findIndex((e) => e.type === 'stored')).toBe(events.length - 1);
  });

  it('builds no event objects when events are off', () => {
    const cache = new RankCache({ gpuBlocks: 2, hostBlocks: 0, emit: null });
    serve(cache, seq(1, 9));
    serve(cache, seq(101, 9));
    expect(serve(cache, seq(101, 9))).toBe(2);
  });
});

describe('RankCache prefix invariant', () => {
  it('a cached block always has its whole prefix cached, so binary-search match equals a linear walk', async () => {
    const fc = await import('fast-check');
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            root: fc.integer({ min: 0, max: 3 }),
            branch: fc.integer({ min: 0, max: 5 }),
            length: fc.integer({ min: 1, max: 40 }),
          }),
          { minLength: 1, maxLength: 60 },
        ),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 0, max: 12 }),
        (requests, gpu, host) => {
          const cache = new RankCache({ gpuBlocks: gpu, hostBlocks: host, emit: () => undefined });
          for (const r of requests) {
            // shared roots, then a branch: prompts that share and diverge like trajectories do
            const tokens = Uint32Array.from({ length: r.length }, (_, i) =>
              i < 8 ? r.root * 1000 + i : r.root * 1000 + r.branch * 100 + i,
            );
            const prompt = new StaticPrompt(tokens);
            const blocks = prompt.blocks(4, 'v1_block_key');
            if (cache.match(blocks) !== cache.matchLinear(blocks)) return false;
            cache.serve(blocks, prompt.tokens);
            if (cache.match(blocks) !== cache.matchLinear(blocks)) return false;
          }
          return cache.gpuSize <= gpu && cache.hostSize <= host;
        },
      ),
      { numRuns: 300 },
    );
  });
});
