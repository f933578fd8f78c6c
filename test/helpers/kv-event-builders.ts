// Builders for KvEvent domain values in tests, with TensorRT-LLM's defaults (rank absent = non-ADP, priority 35).
import type { StreamStored } from '../../src/core/stream/decode-batch.js';
import type { HashAlgo, KvEvent, KvEventData, StoredBlock, WireBlockHash } from '../../src/core/wire/kv-event.js';

export interface EventScope {
  readonly eventId?: number | null;
  readonly rank?: number | null;
  readonly windowSize?: number | null;
  readonly hashAlgo?: HashAlgo | null;
  readonly layerGroupId?: number | null;
}

export function kvEvent(data: KvEventData, scope: EventScope = {}): KvEvent {
  return {
    eventId: scope.eventId ?? null,
    data,
    windowSize: scope.windowSize === undefined ? 4096 : scope.windowSize,
    attentionDpRank: scope.rank ?? null,
    hashAlgo: scope.hashAlgo ?? null,
    layerGroupId: scope.layerGroupId ?? null,
  };
}

export function storedBlock(blockHash: WireBlockHash, cacheLevel = 0, tokens: readonly number[] = []): StoredBlock {
  return {
    blockHash,
    tokens: Uint32Array.from(tokens),
    tokenExtraIds: null,
    cacheLevel,
    priority: 35,
    mmKeys: [],
    cacheSalt: null,
    loraId: null,
  };
}

export function stored(hashes: readonly WireBlockHash[], scope: EventScope = {}, cacheLevel = 0): KvEvent {
  return kvEvent({ type: 'stored', parentHash: null, blocks: hashes.map((h) => storedBlock(h, cacheLevel)) }, scope);
}

export function removed(hashes: readonly WireBlockHash[], scope: EventScope = {}): KvEvent {
  return kvEvent({ type: 'removed', blockHashes: hashes }, scope);
}

export function created(numBlocksPerCacheLevel: readonly number[], scope: EventScope = {}): KvEvent {
  return kvEvent({ type: 'created', numBlocksPerCacheLevel }, scope);
}

export function updatedLevel(hash: WireBlockHash, oldValue: number, newValue: number, scope: EventScope = {}): KvEvent {
  return kvEvent(
    { type: 'updated', blockHash: hash, cacheLevel: { oldValue, newValue }, priority: { oldValue: 35, newValue: 35 } },
    scope,
  );
}

export function allCleared(scope: EventScope = {}): KvEvent {
  return kvEvent({ type: 'all_cleared' }, scope);
}

/** A stream's (vLLM, SGLang) stored event as decoded: no LoRA, salt, group or extra keys unless the test says. */
export function streamStored(
  fields: Pick<StreamStored, 'blockHashes' | 'blockSize'> & Partial<StreamStored>,
): StreamStored {
  return {
    type: 'stored',
    parentHash: null,
    tokens: null,
    loraId: null,
    loraName: null,
    cacheSalt: null,
    medium: 'GPU',
    groupIdx: null,
    slidingWindow: null,
    extraKeys: false,
    blockHashBytes: null,
    parentHashBytes: null,
    blockExtraKeys: null,
    ...fields,
  };
}
