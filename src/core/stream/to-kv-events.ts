// Turns decoded stream batches into the domain's KvEvents (the pull path's model), so worker truth, the oracle and
// every finding read streams and drains alike. Stream events carry no event_id (their sequence is the batch seq,
// tracked by stream-sequencer.ts), block tokens arrive concatenated and are split by block_size, and the hashes enter
// either as published (TensorRT-LLM: v2_sha256_64) or re-keyed from their tokens (rekeyer.ts).
import type { HashCheck } from '../state/hash-verifier.js';
import type { KvEvent, StoredBlock } from '../wire/kv-event.js';
import type { WireIssue } from '../wire/wire-issue.js';
import type { StreamBatch, StreamStored } from './decode-batch.js';
import { StreamRekeyer } from './rekeyer.js';
import { streamHashes, type StreamEngine } from './stream-engine.js';
import { VllmHashChecker, type VllmHashing } from './vllm-hash-checker.js';

export interface StreamConversion {
  readonly events: KvEvent[];
  readonly issues: WireIssue[];
  /** stored blocks left out: their parent was unknown (re-keyed engines) or their tokens not integers */
  readonly unresolvedBlocks: number;
  /** removed hashes left out: never stored as far as the re-keyer knows */
  readonly unknownRemovals: number;
  /**
   * vLLM: the engine's own hashes recomputed (vllm-hash-checker.ts), aligned with `events` (null for events other
   * than stored); null when the engine's hashes are not checked here
   */
  readonly engineChecks: (readonly HashCheck[] | null)[] | null;
}

export interface StreamConverterOptions {
  readonly rekeyer?: StreamRekeyer;
  /** vLLM only: how the deployment hashes (unstated: its blocks check as unverifiable) */
  readonly vllmHashing?: VllmHashing;
}

/** Marks a block whose hash covers more than its tokens (extra_keys, mm_keys): never recomputed, never a mismatch. */
const EXTRA_KEYS_MARK = [{ hash: 'stream-extra-keys', startOffset: 0 }] as const;
const NO_TOKENS = new Uint32Array(0);

function cacheLevel(medium: string | null): number {
  return medium === null || medium.toUpperCase() === 'GPU' ? 0 : 1;
}

export class StreamEventConverter {
  readonly #engine: StreamEngine;
  readonly #rekeyer: StreamRekeyer | null;
  readonly #vllm: VllmHashChecker | null;

  constructor(engine: StreamEngine, options: StreamConverterOptions = {}) {
    this.#engine = engine;
    this.#rekeyer = streamHashes(engine) === 'rekeyed' ? (options.rekeyer ?? new StreamRekeyer()) : null;
    this.#vllm = engine === 'vllm' ? new VllmHashChecker(options.vllmHashing ?? { algo: null, seed: null }) : null;
  }

  get rekeyEvicted(): number {
    return this.#rekeyer?.evicted ?? 0;
  }

  /** A rank's stream restarted: forget what its hashes meant. */
  resetRank(rank: number): void {
    this.#rekeyer?.resetRank(rank);
    this.#vllm?.resetRank(rank);
  }

  /**
   * `rank` is the sequence's rank (the socket's); `statedRank` what KvEvent.attentionDpRank should say (null on a
   * worker without attention DP).
   */
  convert(batch: StreamBatch, rank: number, statedRank: number | null, where: string): StreamConversion {
    const events: KvEvent[] = [];
    const engineChecks: (readonly HashCheck[] | null)[] = [];
    const issues: WireIssue[] = [];
    let unresolvedBlocks = 0;
    let unknownRemovals = 0;
    const base = { eventId: null, attentionDpRank: statedRank, hashAlgo: 'v2_sha256_64' as const };
    batch.events.forEach((event, i) => {
      const path = `${where}.events[${i}]`;
      if (event.type === 'all_cleared') {
        this.#rekeyer?.resetRank(rank);
        events.push({ ...base, data: { type: 'all_cleared' }, windowSize: null, layerGroupId: null });
        engineChecks.push(null);
        return;
      }
      if (event.type === 'removed') {
        let hashes: bigint[] = [...event.blockHashes];
        if (this.#rekeyer !== null) {
          const keys = hashes.map((h) => this.#rekeyer!.keyOf(rank, h));
          unknownRemovals += keys.filter((k) => k === null).length;
          hashes = keys.filter((k): k is bigint => k !== null);
        }
        if (hashes.length > 0) {
          events.push({
            ...base,
            data: { type: 'removed', blockHashes: hashes },
            windowSize: null,
            layerGroupId: event.groupIdx,
          });
          engineChecks.push(null);
        }
        return;
      }
      const split = splitBlocks(event, path, issues);
      if (split === null) {
        unresolvedBlocks += event.blockHashes.length;
        if (this.#rekeyer === null) {
          events.push(
            this.#stored(
              base,
              event,
              event.blockHashes,
              event.parentHash,
              event.blockHashes.map(() => NO_TOKENS),
            ),
          );
          engineChecks.push(null);
        }
        return;
      }
      if (this.#rekeyer === null) {
        events.push(this.#stored(base, event, event.blockHashes, event.parentHash, split));
        engineChecks.push(null);
        return;
      }
      // checked before re-keying: the check chains on the engine's hashes, whatever the re-keyer knows
      // a block_size the tokens do not fit (hybrid models, Dynamo #9376) leaves the split uncertain: never a mismatch
      const consistent = event.tokens !== null && event.tokens.length === event.blockHashes.length * event.blockSize;
      const checks =
        this.#vllm === null
          ? null
          : consistent
            ? this.#vllm.check(rank, event, split)
            : split.map(() => 'unverifiable' as const);
      const rekeyed = this.#rekeyer.stored(rank, event.parentHash, event.blockHashes, split, event.loraId);
      if (rekeyed.keys === null) {
        unresolvedBlocks += event.blockHashes.length;
        return;
      }
      events.push(this.#stored(base, event, rekeyed.keys, rekeyed.parentKey, split));
      engineChecks.push(checks);
    });
    return {
      events,
      issues,
      unresolvedBlocks,
      unknownRemovals,
      engineChecks: this.#vllm === null ? null : engineChecks,
    };
  }

  #stored(
    base: Pick<KvEvent, 'eventId' | 'attentionDpRank' | 'hashAlgo'>,
    event: StreamStored,
    hashes: readonly bigint[],
    parent: bigint | null,
    tokens: readonly Uint32Array[],
  ): KvEvent {
    const level = cacheLevel(event.medium);
    const blocks: StoredBlock[] = hashes.map((blockHash, i) => ({
      blockHash,
      tokens: tokens[i] ?? NO_TOKENS,
      tokenExtraIds: null,
      cacheLevel: level,
      priority: null,
      mmKeys: event.extraKeys ? EXTRA_KEYS_MARK : [],
      cacheSalt: null,
      loraId: event.loraId,
    }));
    return {
      ...base,
      data: { type: 'stored', parentHash: parent, blocks },
      windowSize: event.slidingWindow,
      layerGroupId: event.groupIdx,
    };
  }

  get engine(): StreamEngine {
    return this.#engine;
  }
}

/** Each block's tokens, from the concatenated token_ids; null when they are not integers or do not fit at all. */
function splitBlocks(event: StreamStored, path: string, issues: WireIssue[]): Uint32Array[] | null {
  const n = event.blockHashes.length;
  const tokens = event.tokens;
  if (tokens === null || n === 0) return null;
  let size = event.blockSize;
  if (tokens.length !== n * size) {
    // hybrid models have published a block_size that is not the tokens' (Dynamo #9376): say so, trust the tokens
    const fits = tokens.length % n === 0 && tokens.length > 0;
    issues.push({
      code: 'stream-block-size-inconsistent',
      message: `${path}: ${n} blocks of block_size ${size} but ${tokens.length} token_ids${fits ? ` (taken as ${tokens.length / n} per block)` : ''}`,
      path: `${path}.block_size`,
      offset: null,
    });
    if (!fits) return null;
    size = tokens.length / n;
  }
  const out: Uint32Array[] = [];
  for (let i = 0; i < n; i++) out.push(tokens.subarray(i * size, (i + 1) * size));
  return out;
}
