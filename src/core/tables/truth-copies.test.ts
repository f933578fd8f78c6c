// Worker truth for copy-counting streams (vLLM, SGLang: KvEvent.residency), against the residency vLLM's own
// subscriber contract counts: per (medium, hash), duplicate references kept, GPU AllBlocksCleared keeping offloaded
// copies (docs/features/kv_events.md and its snapshot wire fixtures).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { kvEvent, storedBlock } from '../../../test/helpers/kv-event-builders.js';
import type { KvEvent } from '../wire/kv-event.js';
import { RouterReplicaTable } from './router-replica-table.js';
import { TierCopies } from './tier-copies.js';
import { WorkerTruthTable } from './worker-truth-table.js';

const GPU = 0;
const CPU = 1;

function store(keys: readonly bigint[], level = GPU, hitLevel = 0): KvEvent {
  return {
    ...kvEvent(
      { type: 'stored', parentHash: null, blocks: keys.map((k) => storedBlock(k, level)) },
      { windowSize: null },
    ),
    residency: { hitLevel },
  };
}
function remove(keys: readonly bigint[], level = GPU, hitLevel = 0): KvEvent {
  return {
    ...kvEvent({ type: 'removed', blockHashes: keys, cacheLevel: level }, { windowSize: null }),
    residency: { hitLevel },
  };
}
function clear(level: number | null, hitLevel = 0): KvEvent {
  const data = level === null ? { type: 'all_cleared' as const } : { type: 'all_cleared' as const, cacheLevel: level };
  return { ...kvEvent(data, { windowSize: null }), residency: { hitLevel } };
}
const keys = (...k: number[]): bigint[] => k.map(BigInt);
const prompt = (...k: number[]): BigUint64Array => BigUint64Array.from(k.map(BigInt));

describe('worker truth with physical copies per medium', () => {
  it('two copies with one removed leave the block held (vLLM does not deduplicate)', () => {
    const t = new WorkerTruthTable();
    t.apply('s', store(keys(1, 2, 3, 4)));
    t.apply('s', store(keys(1, 2, 3, 4)));
    t.apply('s', remove(keys(1, 2, 3, 4)));
    expect(t.blockCount('s')).toBe(4);
    expect(t.bestPrefix('s', prompt(1, 2, 3, 4)).bestRankBlocks).toBe(4);
    expect(t.streams('s')[0]?.storedAgain).toBe(4);
    t.apply('s', remove(keys(1, 2, 3, 4)));
    expect(t.blockCount('s')).toBe(0);
  });

  it('evicting the GPU copy keeps the CPU copy: resident, but a hit only when the hit tier reaches CPU', () => {
    for (const hitLevel of [0, 1]) {
      const t = new WorkerTruthTable();
      t.apply('s', store(keys(1, 2, 3), GPU, hitLevel));
      t.apply('s', store(keys(1, 2, 3), CPU, hitLevel));
      t.apply('s', remove(keys(1, 2, 3), GPU, hitLevel));
      expect(t.blockCount('s')).toBe(3);
      expect(t.blocksByLevel('s', 0)).toEqual({ 0: 0, 1: 3 });
      expect(t.bestPrefix('s', prompt(1, 2, 3)).bestRankBlocks).toBe(hitLevel >= CPU ? 3 : 0);
    }
  });

  it("AllBlocksCleared of vLLM's GPU pool clears GPU residency only", () => {
    const t = new WorkerTruthTable();
    t.apply('s', store(keys(1, 2, 3)));
    t.apply('s', store(keys(1, 2, 3), CPU));
    t.apply('s', store(keys(7)));
    expect(t.apply('s', clear(GPU)).cleared).toBe(1);
    expect(t.blockCount('s')).toBe(3);
    expect(t.blocksByLevel('s', 0)).toEqual({ 0: 0, 1: 3 });
    t.apply('s', clear(null));
    expect(t.blockCount('s')).toBe(0);
  });

  it('a removal at a medium without a copy there is unknown and changes nothing', () => {
    const t = new WorkerTruthTable();
    t.apply('s', store(keys(1)));
    t.apply('s', remove(keys(1), CPU));
    expect(t.blockCount('s')).toBe(1);
    expect(t.streams('s')[0]?.removedUnknown).toBe(1);
  });

  it('the router-facing view keeps the hit tier: a CPU store is no hit for it by default', () => {
    const r = new RouterReplicaTable();
    r.apply('s', { ...store(keys(1, 2)), hashAlgo: 'v2_sha256_64' });
    r.apply('s', { ...store(keys(3), CPU), hashAlgo: 'v2_sha256_64' });
    r.apply('s', { ...remove(keys(1), CPU), hashAlgo: 'v2_sha256_64' });
    expect(r.matchedBlocks('s', prompt(1, 2, 3), 'v2_sha256_64')).toBe(2);
    const cpu = new RouterReplicaTable();
    cpu.apply('s', { ...store(keys(1, 2), GPU, 1), hashAlgo: 'v2_sha256_64' });
    cpu.apply('s', { ...store(keys(3), CPU, 1), hashAlgo: 'v2_sha256_64' });
    expect(cpu.matchedBlocks('s', prompt(1, 2, 3), 'v2_sha256_64')).toBe(3);
  });

  it('agrees with a Counter over (medium, hash) under random stores, removals and clears', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            op: fc.constantFrom('store', 'remove', 'remove', 'clear'),
            key: fc.integer({ min: 0, max: 6 }),
            level: fc.integer({ min: 0, max: 2 }),
          }),
          { maxLength: 80 },
        ),
        (ops) => {
          const t = new WorkerTruthTable();
          const model = new Map<string, number>();
          for (const o of ops) {
            const k = BigInt(o.key);
            if (o.op === 'store') {
              t.apply('s', store([k], o.level));
              model.set(`${o.level}:${o.key}`, (model.get(`${o.level}:${o.key}`) ?? 0) + 1);
            } else if (o.op === 'remove') {
              t.apply('s', remove([k], o.level));
              const n = model.get(`${o.level}:${o.key}`) ?? 0;
              if (n > 0) model.set(`${o.level}:${o.key}`, n - 1);
            } else {
              t.apply('s', clear(o.level));
              for (const id of [...model.keys()]) if (id.startsWith(`${o.level}:`)) model.delete(id);
            }
          }
          const held = new Set([...model].filter(([, n]) => n > 0).map(([id]) => id.split(':')[1]));
          expect(t.blockCount('s')).toBe(held.size);
          for (let key = 0; key <= 6; key++) {
            const gpu = (model.get(`0:${key}`) ?? 0) > 0;
            expect(t.bestPrefix('s', prompt(key)).bestRankBlocks).toBe(gpu ? 1 : 0);
          }
        },
      ),
    );
  });
});

describe('TierCopies', () => {
  it('counts past the payload byte without saturating', () => {
    const c = new TierCopies();
    for (let i = 0; i < 300; i++) c.add(5n, 1);
    expect(c.count(5n, 1)).toBe(300);
    for (let i = 0; i < 299; i++) c.remove(5n, 1);
    expect(c.count(5n, 1)).toBe(1);
    expect(c.lowest(5n)).toBe(1);
    expect(c.remove(5n, 1)).toBe(0);
    expect(c.lowest(5n)).toBe(-1);
    expect(c.remove(5n, 1)).toBe(-1);
  });
});
