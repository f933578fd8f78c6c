// Turns decoded stream batches into the domain's KvEvents (the pull path's model), so worker truth, the oracle and
// every finding read streams and drains alike. Stream events carry no event_id (their sequence is the batch seq,
// tracked by stream-sequencer.ts), block tokens arrive concatenated and are split by block_size, and the hashes enter
// either as published (TensorRT-LLM: v2_sha256_64) or re-keyed from their tokens (rekeyer.ts).
import type { HashCheck } from '../state/hash-verifier.js';
import type { KvEvent, Residency, StoredBlock } from '../wire/kv-event.js';
import type { WireIssue } from '../wire/wire-issue.js';
import { blockScopes } from './block-scope.js';
import type { StreamBatch, StreamRemoved, StreamStored } from './decode-batch.js';
import { StreamRekeyer, type DroppedCopies } from './rekeyer.js';
import { streamHashes, type StreamEngine } from './stream-engine.js';
import { VllmHashChecker, type VllmHashing } from './vllm-hash-checker.js';

export interface StreamConversion {
  readonly events: KvEvent[];
  readonly issues: WireIssue[];
  /**
   * stored blocks held without a prompt-matchable key: their parent was stored before kvsentinel subscribed, or their
   * tokens are absent or not integers (re-keyed engines); or left out (TensorRT-LLM blocks whose tokens were unreadable)
   */
  readonly unresolvedBlocks: number;
  /** removed hashes that matched no resident copy: a missed store, or history before the subscription */
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
  /** the slowest cache level a request reuses (0 = GPU, the default; 1 = CPU; 2 = disk) */
  readonly hitLevel?: number;
}

/**
 * Marks a block whose hash covers more than its tokens (extra_keys, mm_keys, a salt or LoRA name): never recomputed,
 * never a mismatch, and counted (the share of such blocks tells the rules that prompts cannot be keyed like them).
 */
const EXTRA_KEYS_MARK = [{ hash: 'stream-extra-keys', startOffset: 0 }] as const;
const NO_MM_KEYS = Object.freeze<[]>([]);
const NO_TOKENS = new Uint32Array(0);

/** The cache level of a medium as vLLM and SGLang name them (absent: GPU, as engines without tiers publish). */
export function mediumLevel(medium: string | null): number {
  if (medium === null) return 0;
  const m = medium.toUpperCase();
  if (m === 'GPU' || m === 'DEVICE' || m === 'L1') return 0;
  if (m === 'CPU' || m === 'HOST' || m === 'CPU_TIER1' || m === 'L2') return 1;
  if (m === 'DISK' || m === 'CPU_TIER2' || m === 'L3' || m === 'STORAGE' || m === 'SSD') return 2;
  return 3;
}

type Base = Pick<KvEvent, 'eventId' | 'attentionDpRank' | 'hashAlgo'> & { readonly residency?: Residency };

export class StreamEventConverter {
  readonly #engine: StreamEngine;
  readonly #rekeyer: StreamRekeyer | null;
  readonly #vllm: VllmHashChecker | null;
  readonly #residency: Residency | null;

  constructor(engine: StreamEngine, options: StreamConverterOptions = {}) {
    this.#engine = engine;
    this.#rekeyer = streamHashes(engine) === 'rekeyed' ? (options.rekeyer ?? new StreamRekeyer()) : null;
    this.#vllm = engine === 'vllm' ? new VllmHashChecker(options.vllmHashing ?? { algo: null, seed: null }) : null;
    // vLLM and SGLang store and remove each physical copy per medium; TensorRT-LLM's tables stay sets
    this.#residency = engine === 'trtllm' ? null : { hitLevel: options.hitLevel ?? 0 };
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
    const out: Conversion = { events: [], engineChecks: [], issues: [], unresolvedBlocks: 0, unknownRemovals: 0 };
    const base: Base = {
      eventId: null,
      attentionDpRank: statedRank,
      hashAlgo: 'v2_sha256_64' as const,
      ...(this.#residency !== null ? { residency: this.#residency } : {}),
    };
    batch.events.forEach((event, i) => {
      if (event.type === 'all_cleared') this.#cleared(base, rank, out);
      else if (event.type === 'removed') this.#removed(base, rank, event, out);
      else this.#storedEvent(base, rank, event, `${where}.events[${i}]`, out);
    });
    return {
      events: out.events,
      issues: out.issues,
      unresolvedBlocks: out.unresolvedBlocks,
      unknownRemovals: out.unknownRemovals,
      engineChecks: this.#vllm === null ? null : out.engineChecks,
    };
  }

  #cleared(base: Base, rank: number, out: Conversion): void {
    // vLLM's AllBlocksCleared comes from the GPU block pool: offloaded copies stay (vLLM's KV-event snapshot documentation);
    // SGLang's reset empties the whole radix tree, host tier included
    const gpuOnly = this.#engine === 'vllm';
    if (gpuOnly) this.#rekeyer?.clearLevel(rank, 0);
    else this.#rekeyer?.resetRank(rank);
    const data = gpuOnly ? { type: 'all_cleared' as const, cacheLevel: 0 } : { type: 'all_cleared' as const };
    out.events.push(kvEvent(base, data, null, null));
    out.engineChecks.push(null);
  }

  #removed(base: Base, rank: number, event: StreamRemoved, out: Conversion): void {
    const level = mediumLevel(event.medium);
    let hashes: bigint[];
    if (this.#rekeyer === null) hashes = [...event.blockHashes];
    else {
      hashes = [];
      for (const h of event.blockHashes) {
        const key = this.#rekeyer.removed(rank, h, level);
        if (key === null) out.unknownRemovals++;
        else hashes.push(key);
      }
    }
    if (hashes.length === 0) return;
    const data =
      this.#residency === null
        ? { type: 'removed' as const, blockHashes: hashes }
        : { type: 'removed' as const, blockHashes: hashes, cacheLevel: level };
    out.events.push(kvEvent(base, data, null, event.groupIdx));
    out.engineChecks.push(null);
  }

  #storedEvent(base: Base, rank: number, event: StreamStored, path: string, out: Conversion): void {
    // vLLM's offloaded copies carry no tokens (token_ids [], block_size 0): the hash names a block stored before
    const tokenless = event.tokens !== null && event.tokens.length === 0;
    const split = tokenless ? null : splitBlocks(event, path, out.issues);
    if (this.#rekeyer === null) {
      if (split === null) out.unresolvedBlocks += event.blockHashes.length;
      const tokens = split ?? event.blockHashes.map(() => NO_TOKENS);
      out.events.push(this.#stored(base, event, event.blockHashes, event.parentHash, tokens));
      out.engineChecks.push(null);
      return;
    }
    // checked before re-keying: the check chains on the engine's hashes, whatever the re-keyer knows
    // a block_size the tokens do not fit (hybrid models, Dynamo #9376) leaves the split uncertain: never a mismatch
    const consistent =
      split !== null && event.tokens !== null && event.tokens.length === event.blockHashes.length * event.blockSize;
    const checks =
      this.#vllm === null
        ? null
        : consistent
          ? this.#vllm.check(rank, event, split)
          : event.blockHashes.map(() => 'unverifiable' as const);
    const scopes = blockScopes(event);
    const rekeyed = this.#rekeyer.stored(rank, {
      parent: event.parentHash,
      hashes: event.blockHashes,
      blocks: split,
      loraId: event.loraId,
      scopes,
      level: mediumLevel(event.medium),
    });
    out.unresolvedBlocks += rekeyed.unchained;
    for (const d of rekeyed.dropped) this.#dropCopies(base, d, out);
    out.events.push(
      this.#stored(
        base,
        event,
        rekeyed.keys,
        rekeyed.parentKey,
        split ?? event.blockHashes.map(() => NO_TOKENS),
        scopes.map((scope) => scope !== null),
      ),
    );
    out.engineChecks.push(checks);
  }

  /** The re-keyer's cap dropped an engine hash: its copies leave the table with it (counted there as evicted). */
  #dropCopies(base: Base, dropped: DroppedCopies, out: Conversion): void {
    dropped.copies.forEach((n, level) => {
      for (let c = 0; c < n; c++) {
        const data = { type: 'removed' as const, blockHashes: [dropped.tableKey], cacheLevel: level };
        out.events.push(kvEvent(base, data, null, null));
        out.engineChecks.push(null);
      }
    });
  }

  /** `scoped[i]`: block i's identity covers more than its tokens (salt, LoRA, extra keys): marked, never a prompt hit */
  #stored(
    base: Base,
    event: StreamStored,
    hashes: readonly bigint[],
    parent: bigint | null,
    tokens: readonly Uint32Array[],
    scoped: readonly boolean[] | null = null,
  ): KvEvent {
    const level =
      this.#residency === null
        ? event.medium === null || mediumLevel(event.medium) === 0
          ? 0
          : 1
        : mediumLevel(event.medium);
    const blocks: StoredBlock[] = hashes.map((blockHash, i) => ({
      blockHash,
      tokens: tokens[i] ?? NO_TOKENS,
      tokenExtraIds: null,
      cacheLevel: level,
      priority: null,
      mmKeys: (scoped === null ? event.extraKeys : scoped[i] === true) ? EXTRA_KEYS_MARK : NO_MM_KEYS,
      cacheSalt: null, // a tenant's salt stays in the process: its scope is in the key already
      loraId: event.loraId,
    }));
    return kvEvent(base, { type: 'stored', parentHash: parent, blocks }, event.slidingWindow, event.groupIdx);
  }

  get engine(): StreamEngine {
    return this.#engine;
  }
}

/** A KvEvent of one fixed shape (a spread of `base` gave each event a dictionary-like object, 7 µs a batch). */
function kvEvent(base: Base, data: KvEvent['data'], windowSize: number | null, layerGroupId: number | null): KvEvent {
  return base.residency === undefined
    ? { eventId: null, attentionDpRank: base.attentionDpRank, hashAlgo: base.hashAlgo, data, windowSize, layerGroupId }
    : {
        eventId: null,
        attentionDpRank: base.attentionDpRank,
        hashAlgo: base.hashAlgo,
        residency: base.residency,
        data,
        windowSize,
        layerGroupId,
      };
}

interface Conversion {
  readonly events: KvEvent[];
  readonly engineChecks: (readonly HashCheck[] | null)[];
  readonly issues: WireIssue[];
  unresolvedBlocks: number;
  unknownRemovals: number;
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
