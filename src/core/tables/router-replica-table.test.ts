import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { allCleared, created, removed, stored, updatedLevel } from '../../../test/helpers/kv-event-builders.js';
import { routerBlockKeys, wireHashChain } from '../hashing/index.js';
import { RouterReplicaTable } from './router-replica-table.js';
import { WorkerTruthTable } from './worker-truth-table.js';

const keys = (...values: bigint[]) => BigUint64Array.from(values);

describe('RouterReplicaTable', () => {
  it('computes matched_tokens as tpb × leading hits, stopping at the first miss', () => {
    const table = new RouterReplicaTable();
    table.apply('s', stored([1n, 2n, 4n]));
    expect(table.matchedTokens('s', keys(1n, 2n, 3n, 4n), 32)).toBe(64);
    expect(table.matchedTokens('s', keys(3n, 1n), 32)).toBe(0);
    expect(table.matchedTokens('unknown', keys(1n), 32)).toBe(0);
  });

  it('matches router-chunked prompts against the hashes workers stored at the same block size', () => {
    const table = new RouterReplicaTable();
    const prompt = Array.from({ length: 70 }, (_, i) => i + 1);
    // the worker stored blocks for the prompt minus its last token, as the router hashes it
    table.apply('s', stored(wireHashChain(prompt.slice(0, 69), 32, 'v1_block_key')));
    expect(table.matchedTokens('s', routerBlockKeys(prompt, 32, 'v1_block_key'), 32)).toBe(96);
  });

  it('diverges from worker truth when one ADP rank removes a hash another still holds', () => {
    const replica = new RouterReplicaTable();
    const truth = new WorkerTruthTable();
    const events = [
      stored([1n, 2n, 3n], { rank: 0, eventId: 1 }),
      stored([1n, 2n], { rank: 1, eventId: 1 }),
      removed([2n], { rank: 1, eventId: 2 }),
    ];
    for (const e of events) {
      replica.apply('s', e);
      truth.apply('s', e);
    }
    const prompt = keys(1n, 2n, 3n);
    expect(replica.matchedTokens('s', prompt, 32)).toBe(32); // the router lost block 2 for every rank
    expect(replica.has('s', 2n)).toBe(false);
    expect(truth.prefixMatch('s', prompt)).toMatchObject({ bestRank: 0, bestRankBlocks: 3 });
    expect(replica.blockCount('s')).toBe(2);
    expect(truth.blockCount('s')).toBe(4);
  });

  it('keeps one set per hash algorithm; created switches the algorithm used for matching', () => {
    const table = new RouterReplicaTable();
    table.apply('s', stored([1n]));
    table.apply('s', stored([2n], { hashAlgo: 'v2_sha256_64' }));
    expect(table.hashAlgoOf('s')).toBe('v1_block_key');
    expect(table.matchedBlocks('s', keys(1n))).toBe(1);
    expect(table.matchedBlocks('s', keys(2n))).toBe(0);
    expect(table.apply('s', created([8192, 0], { hashAlgo: 'v2_sha256_64' }))).toEqual({
      added: 0,
      removed: 0,
      ignored: false,
    });
    expect(table.hashAlgoOf('s')).toBe('v2_sha256_64');
    expect(table.matchedBlocks('s', keys(2n))).toBe(1);
    expect(table.matchedBlocks('s', keys(1n), 'v1_block_key')).toBe(1);
    // created does not clear: the router keeps its table
    expect(table.blockCount('s', 'v1_block_key')).toBe(1);
  });

  it('ignores updated and all_cleared, and counts unknown removals', () => {
    const table = new RouterReplicaTable();
    table.apply('s', stored([1n, 2n]));
    expect(table.apply('s', updatedLevel(1n, 0, 1)).ignored).toBe(true);
    expect(table.apply('s', allCleared()).ignored).toBe(true);
    expect(table.apply('s', removed([2n, 7n]))).toEqual({ added: 0, removed: 1, ignored: false });
    expect(table.servers()).toEqual([
      {
        server: 's',
        hashAlgo: 'v1_block_key',
        blocksPerAlgo: new Map([['v1_block_key', 1]]),
        removedUnknown: 1,
        ignoredEvents: 2,
      },
    ]);
  });

  it('backfill inserts the router’s own keys, and clearServer forgets', () => {
    const table = new RouterReplicaTable();
    expect(table.backfill('s', keys(0n, 5n, 0xffff_ffff_ffff_ffffn))).toBe(3);
    expect(table.matchedBlocks('s', keys(0n, 5n, 0xffff_ffff_ffff_ffffn, 6n))).toBe(3);
    expect(table.byteLength).toBeGreaterThan(0);
    expect(table.clearServer('s')).toBe(3);
    expect(table.servers()).toEqual([]);
  });

  it('caps a server at maxBlocksPerServer across its algorithm sets, stored and backfill alike, counted', () => {
    const table = new RouterReplicaTable({ maxBlocksPerServer: 4 });
    table.apply('s', stored([1n, 2n, 3n]));
    table.apply('s', stored([4n, 5n]));
    expect(table.blockCount('s')).toBe(4);
    expect(table.has('s', 5n)).toBe(true);
    expect(table.evictedBlocks('s')).toBe(1);
    table.apply('s', stored([5n, 4n])); // held already: nothing evicted
    expect(table.evictedBlocks('s')).toBe(1);
    expect(table.backfill('s', BigUint64Array.from([7n, 8n]))).toBe(2);
    expect(table.blockCount('s')).toBe(4);
    expect(table.evictedBlocks('s')).toBe(3);
    // another algorithm's set shares the server's cap and takes from the largest set while it is empty
    table.apply('s', stored([9n], { hashAlgo: 'v2_sha256_64' }));
    expect(table.blockCount('s') + table.blockCount('s', 'v2_sha256_64')).toBe(4);
    expect(table.evictedBlocks('s')).toBe(4);
    expect(table.evictedBlocks('other')).toBe(0);
  });

  it('agrees with one Set per server under random events from any rank', () => {
    const keyArb = fc.bigInt({ min: 0n, max: 9n });
    const eventArb = fc.record({
      stored: fc.boolean(),
      rank: fc.integer({ min: 0, max: 3 }),
      hashes: fc.array(keyArb, { maxLength: 4 }),
    });
    fc.assert(
      fc.property(
        fc.array(eventArb, { maxLength: 50, size: 'max' }),
        fc.array(keyArb, { maxLength: 6 }),
        (events, query) => {
          const table = new RouterReplicaTable();
          const model = new Set<bigint>();
          for (const e of events) {
            table.apply('s', e.stored ? stored(e.hashes, { rank: e.rank }) : removed(e.hashes, { rank: e.rank }));
            for (const h of e.hashes) {
              if (e.stored) model.add(h);
              else model.delete(h);
            }
          }
          let n = 0;
          while (n < query.length && model.has(query[n]!)) n++;
          expect(table.matchedTokens('s', BigUint64Array.from(query), 16)).toBe(16 * n);
          expect(table.blockCount('s')).toBe(model.size);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("applyKeys (the relay buffer's compact form) leaves the same table as apply", () => {
    const keyArb = fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).chain((big) => fc.constantFrom(big, big % 16n));
    const eventArb = fc.record({
      stored: fc.boolean(),
      algo: fc.constantFrom(null, 'v2_sha256_64' as const),
      hashes: fc.array(keyArb, { maxLength: 5 }),
    });
    fc.assert(
      fc.property(fc.array(eventArb, { maxLength: 40 }), (events) => {
        const viaApply = new RouterReplicaTable();
        const viaKeys = new RouterReplicaTable();
        for (const e of events) {
          const event = e.stored ? stored(e.hashes, { hashAlgo: e.algo }) : removed(e.hashes, { hashAlgo: e.algo });
          const a = viaApply.apply('s', event);
          const b = viaKeys.applyKeys('s', e.stored ? 'stored' : 'removed', e.algo, BigUint64Array.from(e.hashes));
          expect(b).toEqual(a);
        }
        expect(viaKeys.servers()).toEqual(viaApply.servers());
        for (const e of events)
          for (const h of e.hashes)
            expect(viaKeys.has('s', h, e.algo ?? 'v1_block_key')).toBe(viaApply.has('s', h, e.algo ?? 'v1_block_key'));
      }),
      { numRuns: 100 },
    );
    const table = new RouterReplicaTable();
    expect(table.applyKeys('s', 'created', 'v2_sha256_64', null)).toEqual({ added: 0, removed: 0, ignored: false });
    expect(table.hashAlgoOf('s')).toBe('v2_sha256_64');
    expect(table.applyKeys('s', 'updated', null, null).ignored).toBe(true);
    expect(table.servers()[0]!.ignoredEvents).toBe(1);
  });
});
