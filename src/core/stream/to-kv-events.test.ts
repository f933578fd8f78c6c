// Re-keyed streams into worker truth: identity beyond tokens (vLLM extra_keys, SGLang cache_salt), the engine hash
// as the block's identity (removals match exactly, removed hashes are forgotten, memory bounded), late joiners'
// stores accepted, and vLLM's tokenless offloaded copies.
import { describe, expect, it } from 'vitest';
import { truncateKeyToU64, v2Chain } from '../hashing/v2-sha256.js';
import { WorkerTruthTable } from '../tables/worker-truth-table.js';
import { streamStored } from '../../../test/helpers/kv-event-builders.js';
import type { StreamBatch, StreamEvent, StreamStored } from './decode-batch.js';
import { StreamRekeyer } from './rekeyer.js';
import { StreamEventConverter } from './to-kv-events.js';

const BS = 4;
const tokensOf = (block: number): number[] => Array.from({ length: BS }, (_, i) => block * 10 + i);

function stored(hashes: number[], parent: number | null, o: Partial<StreamStored> = {}): StreamStored {
  const tokens = o.tokens ?? Uint32Array.from(hashes.flatMap((_, i) => tokensOf(i)));
  return streamStored({
    blockHashes: hashes.map(BigInt),
    parentHash: parent === null ? null : BigInt(parent),
    tokens,
    blockSize: BS,
    ...o,
  });
}
const removed = (hashes: number[], medium = 'GPU'): StreamEvent => ({
  type: 'removed',
  blockHashes: hashes.map(BigInt),
  medium,
  groupIdx: null,
});
const batch = (...events: StreamEvent[]): StreamBatch => ({ ts: 0, rank: null, events });

function rig(engine: 'vllm' | 'sglang' = 'vllm', rekeyer?: StreamRekeyer, hitLevel = 0) {
  const converter = new StreamEventConverter(engine, { ...(rekeyer !== undefined ? { rekeyer } : {}), hitLevel });
  const truth = new WorkerTruthTable();
  let unknownRemovals = 0;
  let unresolved = 0;
  const send = (...events: StreamEvent[]): void => {
    const out = converter.convert(batch(...events), 0, null, 'test');
    unknownRemovals += out.unknownRemovals;
    unresolved += out.unresolvedBlocks;
    for (const e of out.events) truth.apply('s', e);
  };
  return { truth, send, counts: () => ({ unknownRemovals, unresolved }) };
}
const promptKeys = (blocks: number): BigUint64Array =>
  BigUint64Array.from(v2Chain(Array.from({ length: blocks }, (_, i) => tokensOf(i)).flat(), BS).map(truncateKeyToU64));

describe('re-keyed stream identity', () => {
  it('vLLM: 6 salted blocks stay 6; evicting one tenant keeps the other; no prompt is credited with either', () => {
    const r = rig();
    const salted = (salt: string) => ({ extraKeys: true, blockExtraKeys: [[salt], null, null] });
    r.send(stored([11, 12, 13], null, salted('tenant-a')), stored([21, 22, 23], null, salted('tenant-b')));
    expect(r.truth.blockCount('s')).toBe(6);
    r.send(removed([11, 12, 13]));
    expect(r.truth.blockCount('s')).toBe(3);
    // an unsalted request cannot reuse salted blocks (vLLM hashes the salt into the first block)
    expect(r.truth.bestPrefix('s', promptKeys(3)).bestRankBlocks).toBe(0);
    r.send(stored([31, 32, 33], null));
    expect(r.truth.bestPrefix('s', promptKeys(3)).bestRankBlocks).toBe(3);
    expect(r.counts().unknownRemovals).toBe(0);
  });

  it('SGLang: cache_salt and lora_name make equal tokens different blocks', () => {
    const r = rig('sglang');
    r.send(
      stored([1, 2], null, { cacheSalt: 'a' }),
      stored([3, 4], null, { cacheSalt: 'b' }),
      stored([5, 6], null, { loraName: 'adapter' }),
      stored([7, 8], null),
    );
    expect(r.truth.blockCount('s')).toBe(8);
    expect(r.truth.bestPrefix('s', promptKeys(2)).bestRankBlocks).toBe(2);
    r.send(removed([7, 8]));
    expect(r.truth.bestPrefix('s', promptKeys(2)).bestRankBlocks).toBe(0);
    expect(r.truth.blockCount('s')).toBe(6);
  });

  it('a store whose parent was published before subscribing is held, and its removal matches', () => {
    const r = rig();
    r.send(stored([501, 502], 500), stored([503], 502));
    expect(r.truth.blockCount('s')).toBe(3);
    expect(r.counts().unresolved).toBe(3);
    r.send(removed([502, 501, 503]));
    expect(r.truth.blockCount('s')).toBe(0);
    expect(r.counts().unknownRemovals).toBe(0);
  });

  it('every removal that matches nothing is counted', () => {
    const r = rig();
    r.send(stored([1], null), removed([1, 99]), removed([1]));
    expect(r.counts().unknownRemovals).toBe(2);
  });

  it('no forever-blocks: a long-lived block survives churn far past the map cap, and removed hashes are forgotten', () => {
    const rekeyer = new StreamRekeyer(16);
    const r = rig('vllm', rekeyer);
    r.send(stored([7], null));
    for (let i = 0; i < 2_000; i++) r.send(stored([10_000 + i], null), removed([10_000 + i]));
    expect(rekeyer.size(0)).toBe(1);
    r.send(removed([7]));
    expect(r.truth.blockCount('s')).toBe(0);
    expect(r.counts().unknownRemovals).toBe(0);
  });

  it('lost removals past the cap: the dropped hashes leave the table too (bounded, counted)', () => {
    const rekeyer = new StreamRekeyer(4);
    const r = rig('vllm', rekeyer);
    for (let i = 0; i < 10; i++) r.send(stored([100 + i], null, { tokens: Uint32Array.from(tokensOf(100 + i)) }));
    expect(rekeyer.evicted).toBe(6);
    expect(r.truth.blockCount('s')).toBe(4);
  });

  it("vLLM's offloaded copy (no tokens) is the GPU block's; GPU AllBlocksCleared keeps it", () => {
    const r = rig();
    r.send(stored([1, 2, 3], null));
    r.send(stored([1, 2, 3], null, { tokens: new Uint32Array(0), blockSize: 0, medium: 'CPU' }));
    r.send({ type: 'all_cleared' });
    expect(r.truth.blockCount('s')).toBe(3);
    expect(r.truth.blocksByLevel('s', 0)).toEqual({ 0: 0, 1: 3 });
    r.send(removed([1, 2, 3], 'CPU'));
    expect(r.truth.blockCount('s')).toBe(0);
    expect(r.counts().unknownRemovals).toBe(0);
  });

  it("an offloaded copy published after its GPU copy was evicted keeps the block's prompt key", () => {
    const r = rig('vllm', undefined, 1);
    r.send(stored([1, 2], null), removed([1, 2]));
    r.send(stored([1, 2], null, { tokens: new Uint32Array(0), blockSize: 0, medium: 'CPU' }));
    expect(r.truth.blocksByLevel('s', 0)).toEqual({ 0: 0, 1: 2 });
    expect(r.truth.bestPrefix('s', promptKeys(2)).bestRankBlocks).toBe(2); // hit_tier cpu
    expect(r.counts().unresolved).toBe(0);
  });
});
