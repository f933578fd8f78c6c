// A fleet of attention-DP TensorRT-LLM CTX workers as their `/kv_cache_events` queues see it: every rank stores a
// batch of `blocksPerBatch` fresh blocks per step (real v1_block_key chains of `tokensPerBlock` tokens) and, once it
// holds `blocksPerRank`, removes its oldest batch in the same step. Stateless per batch: a batch's blocks follow from
// (rank, batch number), so a removal recomputes the hashes it names instead of the generator keeping 25 M of them
// (which would sit in the measured process's memory). Events come as domain objects (the fill) or as the compact
// JSON items TensorRT-LLM writes (the churn), byte for byte what the project's serializer writes (checked).
import { hashV1Block } from '../../src/core/hashing/index.js';
import type { KvEvent, StoredBlock } from '../../src/core/wire/kv-event.js';
import { serializeKvEvent } from '../../src/core/wire/serialize-kv-events.js';

export interface FleetShape {
  readonly servers: number;
  readonly ranks: number;
  readonly blocksPerRank: number;
  readonly tokensPerBlock: number;
  readonly blocksPerBatch: number;
}

const WINDOW_SIZE = 4096;
const PRIORITY = 35;
const VOCAB = 152_064;
/** distinct token blocks the batches draw from; each batch's root block is made unique by its first two tokens */
const POOL = 64;

function tokenText(id: number): string {
  return `{"type":"unique_token","token_id":${id},"token_extra_id":0}`;
}

interface RankCursor {
  /** next event_id of this rank (0 is its `created` event) */
  eventId: number;
  /** batches stored so far */
  batches: number;
}

export class FleetWorkload {
  readonly shape: FleetShape;
  /** batches a full rank holds */
  readonly residentBatches: number;
  readonly #pool: Uint32Array[] = [];
  /** the JSON of each pool block's tokens, whole (`[…]`) and from the third token on (`,…]`) */
  readonly #poolText: string[] = [];
  readonly #poolTail: string[] = [];
  readonly #cursors: RankCursor[];
  readonly #hashes: BigUint64Array;
  readonly #removed: BigUint64Array;

  constructor(shape: FleetShape) {
    if (shape.blocksPerRank % shape.blocksPerBatch !== 0) throw new Error('blocksPerRank must be whole batches');
    this.shape = shape;
    this.residentBatches = shape.blocksPerRank / shape.blocksPerBatch;
    let s = 0x2545f491;
    for (let p = 0; p < POOL; p++) {
      const tokens = new Uint32Array(shape.tokensPerBlock);
      for (let t = 0; t < tokens.length; t++) {
        s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
        tokens[t] = (s >>> 8) % VOCAB;
      }
      this.#pool.push(tokens);
      const texts = Array.from(tokens, tokenText);
      this.#poolText.push(`[${texts.join(',')}]`);
      this.#poolTail.push(
        `${texts
          .slice(2)
          .map((t) => `,${t}`)
          .join('')}]`,
      );
    }
    this.#cursors = Array.from({ length: shape.servers * shape.ranks }, () => ({ eventId: 0, batches: 0 }));
    this.#hashes = new BigUint64Array(shape.blocksPerBatch);
    this.#removed = new BigUint64Array(shape.blocksPerBatch);
  }

  server(s: number): string {
    return `ctx${s}`;
  }

  /** batches the fleet has stored so far */
  storedBatches(): number {
    let n = 0;
    for (const c of this.#cursors) n += c.batches;
    return n;
  }

  /** batches this rank has stored so far */
  batchesOf(s: number, rank: number): number {
    return this.#cursors[s * this.shape.ranks + rank]!.batches;
  }

  /** The root block's tokens: a pool block whose first two ids name (rank, batch), so every chain is distinct. */
  #rootTokens(globalRank: number, batch: number): Uint32Array {
    const tokens = this.#pool[(batch * this.shape.blocksPerBatch) % POOL]!.slice();
    tokens[0] = batch % 100_000;
    tokens[1] = globalRank + 1024 * Math.floor(batch / 100_000);
    return tokens;
  }

  #blockTokens(batch: number, j: number): Uint32Array {
    return this.#pool[(batch * this.shape.blocksPerBatch + j) % POOL]!;
  }

  /** The hashes of a batch's blocks into `out`, chained from a root without parent. */
  #batchHashes(globalRank: number, batch: number, out: BigUint64Array, root: Uint32Array | null): void {
    let parent = hashV1Block(root ?? this.#rootTokens(globalRank, batch), 0n);
    out[0] = parent;
    for (let j = 1; j < out.length; j++) {
      parent = hashV1Block(this.#blockTokens(batch, j), parent);
      out[j] = parent;
    }
  }

  /** Each rank's first event, as TensorRT-LLM sends it when its pool is created. */
  created(s: number, rank: number): KvEvent {
    const c = this.#cursors[s * this.shape.ranks + rank]!;
    if (c.eventId !== 0) throw new Error('created after other events');
    c.eventId++;
    return {
      eventId: 0,
      data: { type: 'created', numBlocksPerCacheLevel: [this.shape.blocksPerRank, 0] },
      windowSize: WINDOW_SIZE,
      attentionDpRank: rank,
      hashAlgo: null,
      layerGroupId: null,
    };
  }

  /** One step of a rank as domain objects: a stored batch, and the removal of its oldest once the rank is full. */
  stepEvents(s: number, rank: number, out: KvEvent[]): void {
    const g = s * this.shape.ranks + rank;
    const c = this.#cursors[g]!;
    const batch = c.batches++;
    const root = this.#rootTokens(g, batch);
    this.#batchHashes(g, batch, this.#hashes, root);
    const blocks: StoredBlock[] = [];
    for (let j = 0; j < this.shape.blocksPerBatch; j++) {
      blocks.push({
        blockHash: this.#hashes[j]!,
        tokens: j === 0 ? root : this.#blockTokens(batch, j),
        tokenExtraIds: null,
        cacheLevel: 0,
        priority: PRIORITY,
        mmKeys: [],
        cacheSalt: null,
        loraId: null,
      });
    }
    out.push(this.#event(c.eventId++, rank, { type: 'stored', parentHash: null, blocks }));
    const old = batch - this.residentBatches;
    if (old < 0) return;
    this.#batchHashes(g, old, this.#removed, null);
    out.push(this.#event(c.eventId++, rank, { type: 'removed', blockHashes: Array.from(this.#removed) }));
  }

  #event(eventId: number, rank: number, data: KvEvent['data']): KvEvent {
    return { eventId, data, windowSize: WINDOW_SIZE, attentionDpRank: rank, hashAlgo: null, layerGroupId: null };
  }

  /** The same step as compact JSON items, appended to `out`. */
  stepItems(s: number, rank: number, out: string[]): void {
    const g = s * this.shape.ranks + rank;
    const c = this.#cursors[g]!;
    const batch = c.batches++;
    const hashes = this.#hashes;
    this.#batchHashes(g, batch, hashes, null);
    const rootPool = (batch * this.shape.blocksPerBatch) % POOL;
    const rootTokens =
      `[${tokenText(batch % 100_000)},${tokenText(g + 1024 * Math.floor(batch / 100_000))}` + this.#poolTail[rootPool]!;
    let blocks = '';
    for (let j = 0; j < hashes.length; j++) {
      const tokens = j === 0 ? rootTokens : this.#poolText[(batch * this.shape.blocksPerBatch + j) % POOL]!;
      blocks +=
        `${j === 0 ? '' : ','}{"type":"stored_block","block_hash":${hashes[j]!.toString()},"tokens":${tokens},` +
        `"cache_level":0,"priority":${PRIORITY},"mm_keys":[],"cache_salt":null}`;
    }
    out.push(
      `{"event_id":${c.eventId++},"data":{"type":"stored","parent_hash":null,"blocks":[${blocks}]},` +
        `"window_size":${WINDOW_SIZE},"attention_dp_rank":${rank}}`,
    );
    const old = batch - this.residentBatches;
    if (old < 0) return;
    this.#batchHashes(g, old, this.#removed, null);
    let removed = '';
    for (let j = 0; j < this.#removed.length; j++) removed += `${j === 0 ? '' : ','}${this.#removed[j]!.toString()}`;
    out.push(
      `{"event_id":${c.eventId++},"data":{"type":"removed","block_hashes":[${removed}]},` +
        `"window_size":${WINDOW_SIZE},"attention_dp_rank":${rank}}`,
    );
  }
}

/**
 * Checks that the JSON items are what the project's TensorRT-LLM serializer writes for the same events: two
 * workloads of one shape, one asked for objects and one for text, must agree for a full rank's first churn steps.
 */
export function checkItemsMatchSerializer(shape: FleetShape): void {
  const small: FleetShape = { ...shape, servers: 1, ranks: 2, blocksPerRank: shape.blocksPerBatch * 3 };
  const objects = new FleetWorkload(small);
  const text = new FleetWorkload(small);
  for (let r = 0; r < small.ranks; r++) {
    objects.created(0, r);
    text.created(0, r);
  }
  for (let step = 0; step < 6; step++) {
    for (let r = 0; r < small.ranks; r++) {
      const events: KvEvent[] = [];
      const items: string[] = [];
      objects.stepEvents(0, r, events);
      text.stepItems(0, r, items);
      const expected = events.map(serializeKvEvent);
      if (expected.join('\n') !== items.join('\n'))
        throw new Error(`fleet workload items differ from serializeKvEvent at step ${step}, rank ${r}`);
    }
  }
}
