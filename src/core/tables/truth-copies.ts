// Worker truth for streams whose engine stores and removes each physical copy per medium (KvEvent.residency): the
// stream's union set holds a block while any copy is held, its payload the lowest level holding one, and the copies
// themselves are counted per level (tier-copies.ts), as vLLM's own subscriber contract counts residency per
// (medium, group, hash) with duplicate references (vLLM's KV-event snapshot documentation).
import { blockKey64 } from '../hashing/block-key.js';
import type { KvEvent } from '../wire/kv-event.js';
import { eventKeys, levelOf, type TruthStream } from './truth-stream.js';
import { splitU64Key as split, type U64HashSet } from './u64-hash-set.js';

/** The table's cap, as the stream's events see it. */
export interface TableRoom {
  /** blocks the server holds now */
  readonly held: () => number;
  readonly max: number;
  /** evicts one block (sparing `spare`); false when nothing could go */
  readonly evict: (spare: U64HashSet) => boolean;
}

export interface CopyApplyResult {
  readonly added: number;
  readonly removed: number;
  readonly cleared: number;
  readonly moved: number;
}

export interface CopyStore {
  /** the block was not held at any level before */
  readonly added: boolean;
  /** copies at this level now (> 1: another copy of a block already held there) */
  readonly copies: number;
}

/** Syncs the union's entry for one key with its copies. */
function settle(stream: TruthStream, hi: number, lo: number): void {
  const lowest = stream.copies!.lowestHalves(hi, lo);
  if (lowest < 0) stream.blocks.deleteHalves(hi, lo);
  else if (!stream.blocks.setPayloadHalves(hi, lo, lowest)) stream.blocks.addHalves(hi, lo, lowest);
}

export function storeCopy(stream: TruthStream, key: bigint, level: number): CopyStore {
  const [hi, lo] = split(key);
  // the union's payload is the lowest level holding a copy: a copy added at `level` can only bring it down
  const held = stream.blocks.payloadHalves(hi, lo);
  const copies = stream.copies!.addHalves(hi, lo, level);
  if (held < 0) stream.blocks.addHalves(hi, lo, level);
  else if (level < held) stream.blocks.setPayloadHalves(hi, lo, level);
  return { added: held < 0, copies };
}

/**
 * Takes one copy away at `level` (null: every copy, at every level). 'gone' when the block is no longer held
 * anywhere, 'kept' when another copy holds it, 'unknown' when no copy was there to remove.
 */
export function removeCopy(stream: TruthStream, key: bigint, level: number | null): 'gone' | 'kept' | 'unknown' {
  const [hi, lo] = split(key);
  if (!stream.blocks.hasHalves(hi, lo)) return 'unknown';
  if (level === null) {
    stream.copies!.deleteHalves(hi, lo);
    stream.blocks.deleteHalves(hi, lo);
    return 'gone';
  }
  if (stream.copies!.removeHalves(hi, lo, level) < 0) return 'unknown';
  settle(stream, hi, lo);
  return stream.blocks.hasHalves(hi, lo) ? 'kept' : 'gone';
}

/** Clears one level (null: all); returns the blocks no longer held anywhere. */
export function clearCopies(stream: TruthStream, level: number | null): number {
  if (level === null) {
    const n = stream.blocks.size;
    stream.copies!.clear();
    stream.blocks.clear();
    return n;
  }
  const halves = stream.copies!.clearLevel(level);
  let gone = 0;
  for (let i = 0; i < halves.length; i += 2) {
    settle(stream, halves[i]!, halves[i + 1]!);
    if (!stream.blocks.hasHalves(halves[i]!, halves[i + 1]!)) gone++;
  }
  return gone;
}

/** Distinct blocks per level: counted from the copies for such streams, kept incrementally for set streams. */
export function blocksPerLevel(stream: TruthStream): number[] {
  return stream.copies === null ? [...stream.blocksPerLevel] : stream.copies.sizes();
}

/** One event of a copy-counting stream (all_cleared is the table's: it spans the rank's streams). */
export function applyCopyEvent(stream: TruthStream, event: KvEvent, room: TableRoom): CopyApplyResult {
  const data = event.data;
  const none = { added: 0, removed: 0, cleared: 0, moved: 0 };
  switch (data.type) {
    case 'created':
      stream.capacityPerLevel = [...data.numBlocksPerCacheLevel];
      return none;
    case 'stored': {
      let added = 0;
      let held = room.held();
      let fresh: U64HashSet | null = null;
      for (const block of data.blocks) {
        const key = blockKey64(block.blockHash);
        if (held >= room.max && !stream.blocks.has(key)) {
          fresh ??= eventKeys(data.blocks);
          if (room.evict(fresh)) held--;
        }
        const copy = storeCopy(stream, key, levelOf(block.cacheLevel));
        if (copy.added) {
          added++;
          held++;
        } else if (copy.copies > 1) stream.storedAgain++;
      }
      return { ...none, added };
    }
    case 'removed': {
      let removed = 0;
      const level = data.cacheLevel === undefined || data.cacheLevel === null ? null : levelOf(data.cacheLevel);
      for (const hash of data.blockHashes) {
        const result = removeCopy(stream, blockKey64(hash), level);
        if (result === 'gone') removed++;
        else if (result === 'unknown') stream.removedUnknown++;
      }
      return { ...none, removed };
    }
    case 'updated': {
      // no copy-counting engine sends one; read as one copy moving between levels
      const change = data.cacheLevel;
      if (change?.newValue === null || change?.newValue === undefined) return none;
      const key = blockKey64(data.blockHash);
      const from = change.oldValue ?? stream.copies!.lowest(key);
      if (from < 0 || removeCopy(stream, key, levelOf(from)) === 'unknown') {
        stream.updatedUnknown++;
        return none;
      }
      storeCopy(stream, key, levelOf(change.newValue));
      return { ...none, moved: 1 };
    }
    case 'all_cleared':
      return none; // handled by #clearMatching
  }
}
