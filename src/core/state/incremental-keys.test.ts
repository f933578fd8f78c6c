import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { blockKeyChain } from '../hashing/block-key.js';
import { routerBlockKeys } from '../hashing/router-chunking.js';
import { extendKeyChain, prefixFingerprints, sharedPrefixTokens } from './incremental-keys.js';
import { ObservationDigester } from './observation-digester.js';

const tokenArray = (max: number) => fc.array(fc.integer({ min: 0, max: 0xffff_ffff }), { maxLength: max });

describe('incremental block keys', () => {
  it('extending the previous turn gives exactly the keys of hashing from scratch', () => {
    fc.assert(
      fc.property(
        tokenArray(300),
        tokenArray(200),
        fc.integer({ min: 0, max: 300 }),
        fc.integer({ min: 1, max: 40 }),
        fc.constantFrom('v1_block_key', 'v2_sha256_64'),
        (first, appended, cut, blockSize, algo) => {
          const previous = Uint32Array.from(first);
          // the next turn keeps a prefix of the previous prompt (possibly all of it) and appends new tokens
          const next = Uint32Array.from([...first.slice(0, Math.min(cut, first.length)), ...appended]);
          const shared = sharedPrefixTokens(prefixFingerprints(previous), prefixFingerprints(next));
          let lcp = 0;
          while (lcp < previous.length && lcp < next.length && previous[lcp] === next[lcp]) lcp++;
          // never claims more than is really shared, and misses at most one stride
          expect(shared).toBeLessThanOrEqual(lcp);
          expect(shared).toBeGreaterThan(lcp - 16);
          const keys = extendKeyChain(next, blockSize, algo, blockKeyChain(previous, blockSize, algo), shared);
          expect(Array.from(keys)).toEqual(Array.from(blockKeyChain(next, blockSize, algo)));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('finds the shared prefix to the fingerprint stride', () => {
    const a = Uint32Array.from({ length: 100 }, (_, i) => i);
    const b = Uint32Array.from(a);
    b[70] = 9999;
    expect(sharedPrefixTokens(prefixFingerprints(a), prefixFingerprints(b))).toBe(64);
    expect(sharedPrefixTokens(prefixFingerprints(a), prefixFingerprints(a))).toBe(96);
  });

  it("the digester's keys for a growing trajectory equal the router chunking of each full prompt", () => {
    const d = new ObservationDigester();
    d.observe(
      {
        kind: 'router-config',
        ts: 0,
        source: 'config',
        routerType: 'kv_cache_aware',
        tokensPerBlock: 32,
        maxBatchSize: 64,
        backfillBlockHashesOnFinish: false,
        servers: ['a'],
      },
      null,
    );
    d.observe({ kind: 'server-info', ts: 0, server: 'a', hashAlgo: 'v1_block_key', tokensPerBlock: 128 }, null);
    let prompt = Uint32Array.from({ length: 1000 }, (_, i) => (i * 7919) >>> 0);
    for (let turn = 0; turn < 5; turn++) {
      const digest = d.digest({
        kind: 'decision',
        ts: turn,
        requestId: `r${turn}`,
        correlationId: 't',
        server: 'a',
        promptTokens: prompt,
        promptTokenCount: prompt.length,
        inflight: null,
      });
      if (digest?.kind !== 'decision') throw new Error('no keys');
      expect(Array.from(digest.keys.router.get('v1_block_key')!)).toEqual(
        Array.from(routerBlockKeys(prompt, 32, 'v1_block_key')),
      );
      expect(Array.from(digest.keys.worker.get('v1_block_key/128')!)).toEqual(
        Array.from(routerBlockKeys(prompt, 128, 'v1_block_key')),
      );
      prompt = Uint32Array.from([...prompt, ...Array.from({ length: 333 }, (_, i) => turn * 1000 + i)]);
    }
  });
});
