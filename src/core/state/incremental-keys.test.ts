import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { blockKeyChain } from '../hashing/block-key.js';
import { routerBlockKeys } from '../hashing/router-chunking.js';
import { extendKeyChain, prefixFingerprints, promptFingerprints, sharedPrefixTokens } from './incremental-keys.js';
import { ObservationDigester, type DecisionKeys } from './observation-digester.js';
import type { DecisionObservation } from '../observe/observation.js';

const tokenArray = (max: number) => fc.array(fc.integer({ min: 0, max: 0xffff_ffff }), { maxLength: max });

/** A digester that saw the router's config (tokens_per_block 32) and one worker's server_info. */
function configuredDigester(
  servers: string[],
  worker: { server: string; tokensPerBlock: number },
): ObservationDigester {
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
      servers,
    },
    null,
  );
  d.observe({ kind: 'server-info', ts: 0, hashAlgo: 'v1_block_key', ...worker }, null);
  return d;
}

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

  it('a changed token changes every checkpoint from its stride on, in the strides hashed four at a time and the rest', () => {
    const base = Uint32Array.from({ length: 7 * 16 + 5 }, (_, i) => (i * 2654435761) >>> 16);
    const original = prefixFingerprints(base);
    for (let at = 0; at < base.length; at++) {
      const changed = Uint32Array.from(base);
      changed[at] = changed[at]! ^ 1;
      const fingerprints = prefixFingerprints(changed);
      for (let c = 0; c < original.length / 2; c++) {
        const same = fingerprints[2 * c] === original[2 * c] && fingerprints[2 * c + 1] === original[2 * c + 1];
        expect(same, `token ${at}, checkpoint ${c}`).toBe(c < Math.floor(at / 16));
      }
    }
  });

  it("the digester's keys for a growing trajectory equal the router chunking of each full prompt", () => {
    const d = configuredDigester(['a'], { server: 'a', tokensPerBlock: 128 });
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

  it('decisions carrying their prompt fingerprints (the relay computes them on its scan thread) give the same keys', () => {
    const plain = (k: DecisionKeys | undefined): unknown =>
      k && {
        ...k,
        router: [...k.router].map(([a, v]) => [a, [...v]]),
        worker: [...k.worker].map(([a, v]) => [a, [...v]]),
      };
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom('t1', 't2', null), fc.nat(400), tokenArray(120), fc.boolean()), {
          minLength: 1,
          maxLength: 8,
        }),
        (turns) => {
          const fresh = (): ObservationDigester => configuredDigester(['a', 'b'], { server: 'b', tokensPerBlock: 64 });
          const [computed, carried, misfit] = [fresh(), fresh(), fresh()];
          const last = new Map<string | null, Uint32Array>();
          turns.forEach(([trajectory, keep, appended, edit], turn) => {
            const before = last.get(trajectory) ?? new Uint32Array(0);
            const prompt = Uint32Array.from([...before.subarray(0, Math.min(keep, before.length)), ...appended]);
            if (edit && prompt.length > 0) prompt[turn % prompt.length] = (prompt[turn % prompt.length]! + 1) >>> 0;
            last.set(trajectory, prompt);
            const obs: DecisionObservation = {
              kind: 'decision',
              ts: turn,
              requestId: `r${turn}`,
              correlationId: trajectory,
              server: 'a',
              promptTokens: prompt,
              promptTokenCount: prompt.length,
              inflight: null,
            };
            const expected = computed.digest(obs);
            const withOwn = carried.digest({ ...obs, promptFingerprints: promptFingerprints(prompt) });
            // fingerprints that cannot be this prompt's (another length) are not used
            const wrong = misfit.digest({ ...obs, promptFingerprints: new Uint32Array(prompt.length + 40) });
            if (expected?.kind !== 'decision' || withOwn?.kind !== 'decision' || wrong?.kind !== 'decision')
              throw new Error('no keys');
            expect(plain(withOwn.keys)).toEqual(plain(expected.keys));
            expect(plain(wrong.keys)).toEqual(plain(expected.keys));
            expect(Array.from(expected.keys.router.get('v1_block_key')!)).toEqual(
              Array.from(routerBlockKeys(prompt, 32, 'v1_block_key')),
            );
          });
        },
      ),
      { numRuns: 200 },
    );
  });

  it('uses the fingerprints a decision carries to find the shared prefix', () => {
    // fingerprints that claim a shared prefix which is not there: the carried ones are what the digest compared
    const d = new ObservationDigester();
    const first = Uint32Array.from({ length: 200 }, (_, i) => i);
    const second = Uint32Array.from({ length: 200 }, (_, i) => i + 1);
    const same = promptFingerprints(first);
    const keys = (prompt: Uint32Array): bigint[] => {
      const digest = d.digest({
        kind: 'decision',
        ts: 0,
        requestId: 'r',
        correlationId: 't',
        server: 'a',
        promptTokens: prompt,
        promptTokenCount: prompt.length,
        inflight: null,
        promptFingerprints: same,
      });
      if (digest?.kind !== 'decision') throw new Error('no keys');
      return Array.from(digest.keys.router.values().next().value!);
    };
    const firstKeys = Array.from(routerBlockKeys(first, 32, 'v1_block_key'));
    expect(keys(first)).toEqual(firstKeys);
    // the 192 tokens the fingerprints say are shared: the first turn's 6 keys reused, though no token is the same
    expect(keys(second).slice(0, 6)).toEqual(firstKeys.slice(0, 6));
    expect(Array.from(routerBlockKeys(second, 32, 'v1_block_key'))[0]).not.toEqual(firstKeys[0]);
  });
});
