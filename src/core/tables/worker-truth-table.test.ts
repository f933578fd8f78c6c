import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { allCleared, created, removed, stored, updatedLevel } from '../../../test/helpers/kv-event-builders.js';
import { blockKeyChain, wireHashChain } from '../hashing/index.js';
import { WorkerTruthTable } from './worker-truth-table.js';

const keys = (...values: bigint[]) => BigUint64Array.from(values);
const tokens = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);

describe('WorkerTruthTable', () => {
  it('matches a prompt against the blocks a worker stored, by real v1 hashes', () => {
    const table = new WorkerTruthTable();
    const prompt = tokens(1, 12);
    table.apply('ctx0', stored(wireHashChain(prompt, 4, 'v1_block_key')));
    expect(table.prefixMatch('ctx0', blockKeyChain(prompt, 4, 'v1_block_key')).bestRankBlocks).toBe(3);
    // shares the first block only
    const other = [...tokens(1, 4), 99, 98, 97, 96];
    expect(table.prefixMatch('ctx0', blockKeyChain(other, 4, 'v1_block_key')).bestRankBlocks).toBe(1);
    expect(table.prefixMatch('ctx1', blockKeyChain(prompt, 4, 'v1_block_key'))).toEqual({
      bestRank: null,
      bestRankBlocks: 0,
      unionBlocks: 0,
      perRank: new Map(),
    });
  });

  it('keys v2_sha256 hex hashes like blockKeyChain does', () => {
    const table = new WorkerTruthTable();
    const prompt = tokens(7, 8);
    table.apply('ctx0', stored(wireHashChain(prompt, 4, 'v2_sha256'), { hashAlgo: 'v2_sha256' }));
    const match = table.prefixMatch('ctx0', blockKeyChain(prompt, 4, 'v2_sha256'), { hashAlgo: 'v2_sha256' });
    expect(match.bestRankBlocks).toBe(2);
    expect(table.streams('ctx0')[0]).toMatchObject({ hashAlgo: 'v2_sha256', blocks: 2 });
  });

  it('stops the prefix at the first miss even when later keys are held', () => {
    const table = new WorkerTruthTable();
    table.apply('s', stored([10n, 11n, 13n]));
    const match = table.prefixMatch('s', keys(10n, 11n, 12n, 13n));
    expect(match.bestRankBlocks).toBe(2);
    expect(match.unionBlocks).toBe(2);
    expect(table.prefixMatch('s', keys(12n, 10n)).bestRankBlocks).toBe(0);
  });

  it('deletes a removal only from the rank that sent it', () => {
    const table = new WorkerTruthTable();
    table.apply('s', stored([1n, 2n, 3n], { rank: 0 }));
    table.apply('s', stored([1n, 2n], { rank: 1 }));
    table.apply('s', removed([2n], { rank: 1 }));
    const match = table.prefixMatch('s', keys(1n, 2n, 3n));
    expect(match.bestRank).toBe(0);
    expect(match.bestRankBlocks).toBe(3);
    expect(match.perRank).toEqual(
      new Map([
        [0, 3],
        [1, 1],
      ]),
    );
    expect(table.has('s', 2n, 0)).toBe(true);
    expect(table.has('s', 2n, 1)).toBe(false);
    expect(table.blockCount('s')).toBe(4);
  });

  it('reports the best single rank and the larger cross-rank union', () => {
    const table = new WorkerTruthTable();
    table.apply('s', stored([1n, 3n], { rank: 0 }));
    table.apply('s', stored([1n, 2n], { rank: 1 }));
    const match = table.prefixMatch('s', keys(1n, 2n, 3n, 4n));
    expect(match.bestRank).toBe(1);
    expect(match.bestRankBlocks).toBe(2);
    expect(match.unionBlocks).toBe(3);
    expect(table.prefixMatch('s', keys(1n, 2n, 3n), { attentionDpRank: 0 }).bestRankBlocks).toBe(1);
  });

  it('breaks best-rank ties toward the lowest rank', () => {
    const table = new WorkerTruthTable();
    table.apply('s', stored([5n], { rank: 3 }));
    table.apply('s', stored([5n], { rank: 2 }));
    expect(table.prefixMatch('s', keys(5n)).bestRank).toBe(2);
  });

  it('tracks cache levels through updated events and can match GPU blocks only', () => {
    const table = new WorkerTruthTable();
    table.apply('s', created([100, 400]));
    table.apply('s', stored([1n, 2n, 3n]));
    table.apply('s', updatedLevel(2n, 0, 1));
    expect(table.streams('s')[0]).toMatchObject({ blocks: 3, blocksPerLevel: [2, 1], capacityPerLevel: [100, 400] });
    expect(table.prefixMatch('s', keys(1n, 2n, 3n)).bestRankBlocks).toBe(3);
    expect(table.prefixMatch('s', keys(1n, 2n, 3n), { maxCacheLevel: 0 }).bestRankBlocks).toBe(1);
    table.apply('s', updatedLevel(2n, 1, 0));
    expect(table.streams('s')[0]?.blocksPerLevel).toEqual([3, 0]);
    expect(table.apply('s', updatedLevel(9n, 0, 1))).toMatchObject({ moved: 0 });
    expect(table.streams('s')[0]?.updatedUnknown).toBe(1);
    table.apply('s', stored([4n], { windowSize: 128 }, 1));
    expect(table.blocksByLevel('s', 0)).toEqual({ 0: 3, 1: 1 });
    expect(table.blocksByLevel('s', 5)).toEqual({});
    expect(table.ranks('s')).toEqual([0]);
  });

  it('records blocks stored directly at host level', () => {
    const table = new WorkerTruthTable();
    table.apply('s', stored([1n], {}, 1));
    table.apply('s', removed([1n]));
    table.apply('s', stored([2n], {}, 1));
    expect(table.streams('s')[0]?.blocksPerLevel).toEqual([0, 1]);
  });

  it('counts removals of unknown blocks and re-stores', () => {
    const table = new WorkerTruthTable();
    table.apply('s', stored([1n, 2n]));
    expect(table.apply('s', stored([2n, 3n]))).toEqual({ added: 1, removed: 0, cleared: 0, moved: 0 });
    expect(table.apply('s', removed([3n, 4n]))).toEqual({ added: 0, removed: 1, cleared: 0, moved: 0 });
    expect(table.streams('s')[0]).toMatchObject({ blocks: 2, storedAgain: 1, removedUnknown: 1, blocksPerLevel: [2] });
  });

  it('all_cleared empties only that rank, and only the stated window when one is given', () => {
    const table = new WorkerTruthTable();
    table.apply('s', stored([1n, 2n], { rank: 0, windowSize: 4096 }));
    table.apply('s', stored([1n], { rank: 0, windowSize: 128 }));
    table.apply('s', stored([1n, 2n], { rank: 1, windowSize: 4096 }));
    expect(table.apply('s', allCleared({ rank: 0, windowSize: 128 })).cleared).toBe(1);
    expect(table.blockCount('s', 0)).toBe(2);
    // the fanout's injected form carries no window: every window of the rank
    expect(table.apply('s', allCleared({ rank: 0, windowSize: null })).cleared).toBe(2);
    expect(table.blockCount('s', 0)).toBe(0);
    expect(table.blockCount('s', 1)).toBe(2);
    expect(table.prefixMatch('s', keys(1n, 2n))).toMatchObject({ bestRank: 1, bestRankBlocks: 2 });
  });

  it('keeps window sizes and layer groups apart, with any/all semantics per rank', () => {
    const table = new WorkerTruthTable();
    table.apply('s', stored([1n, 2n], { layerGroupId: 0, hashAlgo: 'v2_sha256_64' }));
    table.apply('s', stored([1n], { layerGroupId: 1, hashAlgo: 'v2_sha256_64' }));
    expect(table.streams('s').map((s) => [s.layerGroupId, s.blocks])).toEqual([
      [0, 2],
      [1, 1],
    ]);
    expect(table.prefixMatch('s', keys(1n, 2n)).bestRankBlocks).toBe(2);
    expect(table.prefixMatch('s', keys(1n, 2n), { require: 'all' }).bestRankBlocks).toBe(1);
    expect(table.prefixMatch('s', keys(1n, 2n), { layerGroupId: 1 }).bestRankBlocks).toBe(1);
    expect(table.prefixMatch('s', keys(1n, 2n), { hashAlgo: 'v1_block_key' }).bestRank).toBeNull();
  });

  it('clearRank and clearServer forget streams', () => {
    const table = new WorkerTruthTable();
    table.apply('a', stored([1n, 2n], { rank: 0 }));
    table.apply('a', stored([3n], { rank: 1 }));
    table.apply('b', stored([1n]));
    expect(table.clearRank('a', 0)).toBe(2);
    expect(table.streams('a').map((s) => s.attentionDpRank)).toEqual([1]);
    expect(table.clearServer('a')).toBe(1);
    expect(table.streams().map((s) => s.server)).toEqual(['b']);
    expect(table.byteLength).toBeGreaterThan(0);
  });

  it('caps a server at maxBlocksPerServer: each new block past it evicts a held one, counted; re-stores evict nothing', () => {
    const table = new WorkerTruthTable({ maxBlocksPerServer: 5 });
    table.apply('s', stored([1n, 2n, 3n], { rank: 0 }));
    table.apply('s', stored([4n, 5n], { rank: 1 }));
    expect(table.evictedBlocks('s')).toBe(0);
    // lost `removed` events: the worker moved on, the table would keep growing
    table.apply('s', stored([6n, 7n, 8n], { rank: 0 }, 1));
    expect(table.blockCount('s')).toBe(5);
    expect(table.evictedBlocks('s')).toBe(3);
    expect([6n, 7n, 8n].every((k) => table.has('s', k, 0))).toBe(true); // the newest blocks are kept
    expect(table.blockCount('s', 1)).toBe(2); // evicted from the stream that grew
    const levels = table.streams('s').find((x) => x.attentionDpRank === 0)!.blocksPerLevel;
    expect(levels).toEqual([0, 3]); // level counts follow the evictions
    table.apply('s', stored([6n, 7n], { rank: 0 })); // already held
    expect(table.evictedBlocks('s')).toBe(3);
    // a stream with nothing to give evicts from the server's largest
    table.apply('s', stored([9n], { rank: 2 }));
    expect(table.blockCount('s')).toBe(5);
    expect(table.blockCount('s', 0)).toBe(2);
    expect(table.evictedBlocks('s')).toBe(4);
    // other servers have their own cap
    table.apply('t', stored([1n, 2n, 3n, 4n, 5n]));
    expect(table.evictedBlocks('t')).toBe(0);
    expect(() => new WorkerTruthTable({ maxBlocksPerServer: 0 })).toThrow(/maxBlocksPerServer/);
  });

  it('never holds more than the cap, and agrees with the uncapped table whenever the cap was not reached', () => {
    const eventArb = fc.record({
      rank: fc.integer({ min: 0, max: 2 }),
      remove: fc.boolean(),
      keys: fc.uniqueArray(fc.bigInt({ min: 1n, max: 40n }), { minLength: 1, maxLength: 6 }),
    });
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 30 }), fc.array(eventArb, { maxLength: 60 }), (cap, events) => {
        const capped = new WorkerTruthTable({ maxBlocksPerServer: cap });
        const free = new WorkerTruthTable();
        for (const e of events) {
          const ev = e.remove ? removed(e.keys, { rank: e.rank }) : stored(e.keys, { rank: e.rank });
          capped.apply('s', ev);
          free.apply('s', ev);
          expect(capped.blockCount('s')).toBeLessThanOrEqual(cap);
          const levels = capped.streams('s').reduce((n, x) => n + x.blocksPerLevel.reduce((a, b) => a + b, 0), 0);
          expect(levels).toBe(capped.blockCount('s'));
          if (capped.evictedBlocks('s') === 0) expect(capped.streams('s')).toEqual(free.streams('s'));
        }
      }),
      { numRuns: 200 },
    );
  });

  it('agrees with a per-rank Set model under random stored/removed/all_cleared sequences', () => {
    const keyArb = fc.bigInt({ min: 0n, max: 7n }).map((n) => n * 0x1_0000_0001n); // key 0 included
    const eventArb = fc.record({
      type: fc.constantFrom('stored', 'removed', 'all_cleared'),
      rank: fc.integer({ min: 0, max: 2 }),
      hashes: fc.array(keyArb, { maxLength: 5 }),
    });
    fc.assert(
      fc.property(
        fc.array(eventArb, { maxLength: 60, size: 'max' }),
        fc.array(keyArb, { maxLength: 6 }),
        (events, query) => {
          const table = new WorkerTruthTable();
          const model = new Map<number, Set<bigint>>();
          for (const e of events) {
            const set = model.get(e.rank) ?? new Set<bigint>();
            model.set(e.rank, set);
            if (e.type === 'stored') {
              table.apply('s', stored(e.hashes, { rank: e.rank }));
              for (const h of e.hashes) set.add(h);
            } else if (e.type === 'removed') {
              table.apply('s', removed(e.hashes, { rank: e.rank }));
              for (const h of e.hashes) set.delete(h);
            } else {
              table.apply('s', allCleared({ rank: e.rank }));
              set.clear();
            }
          }
          const lead = (held: (k: bigint) => boolean) => {
            let n = 0;
            while (n < query.length && held(query[n]!)) n++;
            return n;
          };
          const match = table.prefixMatch('s', BigUint64Array.from(query));
          const perRank = [...model].map(([rank, set]) => [rank, lead((k) => set.has(k))] as const);
          // ranks that only ever saw all_cleared still have an (empty) stream only if they got a stored/removed
          for (const [rank, n] of perRank) expect(match.perRank.get(rank) ?? 0).toBe(n);
          expect(match.bestRankBlocks).toBe(Math.max(0, ...perRank.map(([, n]) => n)));
          expect(match.unionBlocks).toBe(lead((k) => [...model.values()].some((set) => set.has(k))));
          for (const [rank, set] of model) expect(table.blockCount('s', rank)).toBe(set.size);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('prefixMatch sees streams created, cleared and re-created after earlier matches (its rank grouping is cached)', () => {
    const table = new WorkerTruthTable();
    const prompt = keys(1n, 2n, 3n);
    table.apply('s', stored([1n], { rank: 0 }));
    expect(table.prefixMatch('s', prompt)).toMatchObject({ bestRank: 0, bestRankBlocks: 1, unionBlocks: 1 });
    // a new rank, then a second stream (other window size) of rank 0, each after a match was computed
    table.apply('s', stored([1n, 2n, 3n], { rank: 2 }));
    expect(table.prefixMatch('s', prompt)).toMatchObject({ bestRank: 2, bestRankBlocks: 3, unionBlocks: 3 });
    table.apply('s', stored([1n, 2n, 3n, 4n], { rank: 0, windowSize: 128 }));
    expect(table.prefixMatch('s', keys(1n, 2n, 3n, 4n))).toMatchObject({ bestRank: 0, bestRankBlocks: 4 });
    // events of rank 0 alternate between its streams: each goes to its own stream
    table.apply('s', stored([9n], { rank: 0 }));
    table.apply('s', stored([8n], { rank: 0, windowSize: 128 }));
    expect(table.streams('s').map((st) => [st.attentionDpRank, st.windowSize, st.blocks])).toEqual([
      [0, 128, 5],
      [0, 4096, 2],
      [2, 4096, 3],
    ]);
    table.clearRank('s', 0);
    expect(table.prefixMatch('s', keys(1n, 2n, 3n, 4n))).toMatchObject({ bestRank: 2, bestRankBlocks: 3 });
    table.apply('s', stored([1n, 2n, 3n, 4n], { rank: 0 }));
    expect(table.prefixMatch('s', keys(1n, 2n, 3n, 4n))).toMatchObject({ bestRank: 0, bestRankBlocks: 4 });
    table.clearServer('s');
    expect(table.prefixMatch('s', prompt).bestRank).toBeNull();
    table.apply('s', stored([1n], { rank: 1 }));
    expect(table.prefixMatch('s', prompt)).toMatchObject({ bestRank: 1, bestRankBlocks: 1 });
  });
});
