// The KV cache of one attention-DP rank of a CTX worker: GPU (cache_level 0) and host (cache_level 1) tiers
// of fixed block capacity, LRU eviction (GPU → host offload emits `updated`, host eviction emits `removed`),
// reuse of the longest cached prefix of whole blocks, and storage of every block of the prompt including the
// partial tail (V1 behaviour, docs/trtllm-wire.md §1.4). Within a chain the deepest block is evicted first, so a
// cached suffix never outlives its prefix.
import { KvsentinelError } from '../core/errors.js';
import type { KvEventData, StoredBlock, WireBlockHash } from '../core/wire/kv-event.js';
import { fingerprint } from './block-key-set.js';
import type { PromptBlocks } from './prompt.js';

export const DEFAULT_PRIORITY = 35;

interface Node {
  readonly key: bigint;
  readonly fp: number;
  /** another block with the same fingerprint (collision chain) */
  sameFp: Node | null;
  readonly wire: WireBlockHash;
  level: 0 | 1;
  prev: Node | null;
  next: Node | null;
}

class LruList {
  head: Node | null = null;
  tail: Node | null = null;
  size = 0;

  pushTail(node: Node): void {
    node.prev = this.tail;
    node.next = null;
    if (this.tail === null) this.head = node;
    else this.tail.next = node;
    this.tail = node;
    this.size++;
  }

  remove(node: Node): void {
    if (node.prev === null) this.head = node.next;
    else node.prev.next = node.next;
    if (node.next === null) this.tail = node.prev;
    else node.next.prev = node.prev;
    node.prev = null;
    node.next = null;
    this.size--;
  }
}

export interface RankCacheOptions {
  readonly gpuBlocks: number;
  readonly hostBlocks: number;
  /** receives the rank's events in order; null when the worker does not need them (events disabled) */
  readonly emit: ((data: KvEventData) => void) | null;
}

export interface ServeResult {
  /** leading full blocks reused */
  readonly reusedBlocks: number;
  /** blocks newly stored (a stored event lists them) */
  readonly storedBlocks: number;
}

export class RankCache {
  readonly gpuBlocks: number;
  readonly hostBlocks: number;
  readonly #emit: ((data: KvEventData) => void) | null;
  readonly #nodes = new Map<number, Node>();
  #count = 0;
  readonly #gpu = new LruList();
  readonly #host = new LruList();
  #removed: WireBlockHash[] = [];

  constructor(options: RankCacheOptions) {
    if (options.gpuBlocks < 1) throw new KvsentinelError('internal', 'RankCache: gpuBlocks must be at least 1');
    this.gpuBlocks = options.gpuBlocks;
    this.hostBlocks = options.hostBlocks;
    this.#emit = options.emit;
  }

  get size(): number {
    return this.#count;
  }

  #get(key: bigint, fp: number): Node | undefined {
    let node = this.#nodes.get(fp);
    while (node !== undefined && node.key !== key) node = node.sameFp ?? undefined;
    return node;
  }

  #insert(node: Node): void {
    const head = this.#nodes.get(node.fp);
    node.sameFp = head ?? null;
    this.#nodes.set(node.fp, node);
    this.#count++;
  }

  #delete(node: Node): void {
    let head = this.#nodes.get(node.fp);
    if (head === node) {
      if (node.sameFp === null) this.#nodes.delete(node.fp);
      else this.#nodes.set(node.fp, node.sameFp);
    } else {
      while (head !== undefined && head.sameFp !== node) head = head.sameFp ?? undefined;
      if (head !== undefined) head.sameFp = node.sameFp;
    }
    node.sameFp = null;
    this.#count--;
  }

  get gpuSize(): number {
    return this.#gpu.size;
  }

  get hostSize(): number {
    return this.#host.size;
  }

  has(key: bigint): boolean {
    return this.#get(key, fingerprint(key)) !== undefined;
  }

  levelOf(key: bigint): 0 | 1 | null {
    return this.#get(key, fingerprint(key))?.level ?? null;
  }

  /** how many leading full blocks of the prompt this rank holds (either tier) */
  matchLinear(blocks: PromptBlocks): number {
    let n = 0;
    while (n < blocks.fullBlocks && this.#get(blocks.keys[n]!, blocks.fps[n]!) !== undefined) n++;
    return n;
  }

  /** how many leading full blocks of the prompt this rank holds (either tier) */
  match(blocks: PromptBlocks): number {
    // Every touch walks a chain deepest-first, so a block is never more recent than its ancestors and is
    // evicted (or offloaded, then evicted) before them: a cached block implies a cached prefix, and the
    // longest cached prefix is found by binary search.
    const keys = blocks.keys;
    const fps = blocks.fps;
    let lo = 0;
    let hi = blocks.fullBlocks;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.#get(keys[mid - 1]!, fps[mid - 1]!) !== undefined) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** prefill finished: reuse the cached prefix, store the rest (tokens = the prompt's token ids) */
  serve(blocks: PromptBlocks, tokens: Uint32Array): ServeResult {
    const reused = this.match(blocks);
    const keys = blocks.keys;
    const fps = blocks.fps;
    // protect the reused prefix from the evictions below, deepest first so the root ends most recent
    for (let i = reused - 1; i >= 0; i--) this.#touch(this.#get(keys[i]!, fps[i]!)!);
    const fresh: number[] = [];
    for (let i = reused; i < keys.length; i++) {
      if (this.#get(keys[i]!, fps[i]!) === undefined) fresh.push(i);
    }
    // make room first so every eviction event precedes the stored event of the new blocks
    this.#makeGpuRoom(Math.max(this.gpuBlocks - fresh.length, 0));
    for (let n = fresh.length - 1; n >= 0; n--) {
      const i = fresh[n]!;
      const node: Node = {
        key: keys[i]!,
        fp: fps[i]!,
        sameFp: null,
        wire: blocks.wire[i]!,
        level: 0,
        prev: null,
        next: null,
      };
      this.#insert(node);
      this.#gpu.pushTail(node);
    }
    this.#flushRemoved();
    if (this.#emit !== null && fresh.length > 0) this.#emitStored(blocks, tokens, fresh);
    // a prompt larger than the whole GPU tier overflows right away
    this.#makeGpuRoom(this.gpuBlocks);
    this.#flushRemoved();
    // a prompt longer than the GPU tier can push its own prefix out while storing its suffix: drop what
    // is left of the chain past the first missing block so a cached block always has its prefix
    if (fresh.length + reused > this.gpuBlocks) {
      let first = 0;
      while (first < keys.length && this.#get(keys[first]!, fps[first]!) !== undefined) first++;
      for (let i = keys.length - 1; i > first; i--) {
        const orphan = this.#get(keys[i]!, fps[i]!);
        if (orphan !== undefined) this.#evict(orphan, orphan.level === 0 ? this.#gpu : this.#host);
      }
      this.#flushRemoved();
    }
    // recency within the chain: deepest least recent
    for (let i = keys.length - 1; i >= 0; i--) {
      const node = this.#get(keys[i]!, fps[i]!);
      if (node !== undefined) this.#touch(node);
    }
    this.#flushRemoved();
    return { reusedBlocks: reused, storedBlocks: fresh.length };
  }

  /** drops everything (worker restart); no events — the new manager starts from a `created` event */
  clear(): void {
    this.#nodes.clear();
    this.#count = 0;
    this.#gpu.head = this.#gpu.tail = null;
    this.#gpu.size = 0;
    this.#host.head = this.#host.tail = null;
    this.#host.size = 0;
    this.#removed = [];
  }

  #touch(node: Node): void {
    if (node.level === 0) {
      this.#gpu.remove(node);
      this.#gpu.pushTail(node);
      return;
    }
    // onboard a host block back to the GPU
    this.#host.remove(node);
    this.#makeGpuRoom(this.gpuBlocks - 1);
    node.level = 0;
    this.#gpu.pushTail(node);
    this.#levelChanged(node, 1);
  }

  /** an `updated` event for a block that moved from `oldLevel` to its level now (removals before it go first) */
  #levelChanged(node: Node, oldLevel: 0 | 1): void {
    this.#flushRemoved();
    this.#emit?.({
      type: 'updated',
      blockHash: node.wire,
      cacheLevel: { newValue: node.level, oldValue: oldLevel },
      priority: { newValue: DEFAULT_PRIORITY, oldValue: DEFAULT_PRIORITY },
    });
  }

  /** offloads (or drops) least recent GPU blocks until at most `limit` remain */
  #makeGpuRoom(limit: number): void {
    while (this.#gpu.size > limit && this.#gpu.head !== null) {
      const victim = this.#gpu.head;
      this.#gpu.remove(victim);
      if (this.hostBlocks > 0) {
        while (this.#host.size >= this.hostBlocks) this.#evict(this.#host.head!, this.#host);
        victim.level = 1;
        this.#host.pushTail(victim);
        this.#levelChanged(victim, 0);
      } else {
        this.#delete(victim);
        if (this.#emit !== null) this.#removed.push(victim.wire);
      }
    }
  }

  #evict(node: Node, list: LruList): void {
    list.remove(node);
    this.#delete(node);
    if (this.#emit !== null) this.#removed.push(node.wire);
  }

  /** consecutive removals of one window are batched into one `removed` event (V1) */
  #flushRemoved(): void {
    if (this.#removed.length === 0) return;
    const blockHashes = this.#removed;
    this.#removed = [];
    this.#emit?.({ type: 'removed', blockHashes });
  }

  #emitStored(blocks: PromptBlocks, tokens: Uint32Array, fresh: readonly number[]): void {
    // one stored event per run of consecutive new blocks; parent = the block before the run (null at the root)
    let run: StoredBlock[] = [];
    let runStart = -1;
    let previous = -2;
    const flush = (): void => {
      if (run.length === 0) return;
      const parentHash = runStart === 0 ? null : blocks.wire[runStart - 1]!;
      this.#emit!({ type: 'stored', parentHash, blocks: run });
      run = [];
    };
    for (const i of fresh) {
      if (i !== previous + 1) {
        flush();
        runStart = i;
      }
      previous = i;
      const start = i * blocks.blockSize;
      const end = Math.min(start + blocks.blockSize, blocks.hashedTokens);
      run.push({
        blockHash: blocks.wire[i]!,
        tokens: tokens.subarray(start, end),
        tokenExtraIds: null,
        cacheLevel: 0,
        priority: DEFAULT_PRIORITY,
        mmKeys: [],
        cacheSalt: null,
        loraId: null,
      });
    }
    flush();
  }
}
