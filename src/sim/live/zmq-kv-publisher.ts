// A simulated worker's ZMQ KV-event publisher in the wire format of each engine (confirmed against their
// ZmqEventPublisher): PUB frames [topic, seq u64 BE, msgpack batch], one PUB per rank at base port + rank, a replay
// ROUTER per rank answering ["", start_seq] with every buffered batch from there and an end marker (seq -1).
//   trtllm      batch [ts, events, dp_rank]; events maps tagged "type"; block_hashes as signed int64
//   vllm        batch {ts, events, data_parallel_rank}; events maps tagged "type"; hashes unsigned
//   vllm-array  batch [ts, events]; events tagged arrays (vLLM before its structs dropped array_like)
//   sglang      batch [ts, events, attn_dp_rank]; events maps tagged "type" with medium, cache_salt, session_id and
//               lora_name, as the newest SGLang publishes them (mem_cache/events.py); hashes as signed int64
// Only full blocks are published (partial blocks are suppressed), only stored / removed / cleared events exist, and
// removals name only blocks that were published. Integers are encoded in the smallest msgpack form, as msgspec does.
// Faults for tests: drop the next batches (from the stream only, or from the replay buffer too), garbage frames, a
// restart (seq from 0, replay buffer empty, same address).
// `vllmHashes` (format vllm): the blocks carry the hashes a vLLM worker with --prefix-caching-hash-algo sha256_cbor
// and PYTHONHASHSEED=seed computes (bytes, or VLLM_KV_EVENTS_USE_INT_BLOCK_HASHES's 64-bit ints) and extra_keys
// [None, …], as newer vLLM publishes them; the simulator's own hashes only say which block is which.
import { KvsentinelError } from '../../core/errors.js';
import { Encoder } from '@msgpack/msgpack';
import { Publisher, Router } from 'zeromq';
import { vllmBlockHash, vllmIntBlockHash, vllmNoneHash } from '../../core/hashing/vllm-block-hash.js';
import { END_SEQ_FRAME, encodeSeq } from '../../core/stream/stream-frames.js';
import type { KvEvent } from '../../core/wire/kv-event.js';

import type { PublisherFormat } from '../publisher-format.js';

export type { PublisherFormat } from '../publisher-format.js';

export interface ZmqKvPublisherOptions {
  readonly format: PublisherFormat;
  readonly ranks: number;
  readonly blockSize: number;
  readonly host?: string;
  readonly replay?: boolean;
  readonly topic?: string;
  /** batches kept for replay (buffer_steps) */
  readonly bufferSteps?: number;
  /** the PUB socket's high-water mark per subscriber (hwm); past it ZMQ drops for that subscriber */
  readonly sendHighWaterMark?: number;
  /** format vllm: publish sha256_cbor hashes seeded with this PYTHONHASHSEED, as bytes or as 64-bit ints */
  readonly vllmHashes?: { readonly seed: string; readonly ints: boolean } | null;
}

export type Wire = number | bigint | string | null | Uint8Array | Wire[] | { [key: string]: Wire };

const encoder = new Encoder({ useBigInt64: true });
const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

function int(v: bigint): number | bigint {
  return v >= -SAFE && v <= SAFE ? Number(v) : v;
}

interface RankPublisher {
  readonly pub: Publisher;
  readonly router: Router | null;
  seq: bigint;
  readonly buffer: { seq: bigint; payload: Uint8Array }[];
  readonly published: Set<bigint>;
  /** vllmHashes: the vLLM hash of each published block, by the simulator's hash */
  readonly vllm: Map<bigint, Uint8Array>;
  pending: Wire[];
}

async function bindConsecutive(
  host: string,
  count: number,
  make: () => Publisher | Router,
): Promise<{ sockets: (Publisher | Router)[]; base: number }> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const first = make();
    await first.bind(`tcp://${host}:*`);
    const base = Number(/:(\d+)$/.exec(first.lastEndpoint ?? '')?.[1]);
    const sockets = [first];
    try {
      for (let r = 1; r < count; r++) {
        const s = make();
        sockets.push(s);
        await s.bind(`tcp://${host}:${base + r}`);
      }
      return { sockets, base };
    } catch {
      for (const s of sockets) s.close();
    }
  }
  throw new KvsentinelError('start-failed', `no ${count} consecutive free ports on ${host}`);
}

export class ZmqKvPublisher {
  readonly options: Required<ZmqKvPublisherOptions>;
  #ranks: RankPublisher[] = [];
  #base = 0;
  #replayBase = 0;
  #dropLive = 0;
  #dropForever = 0;
  #flushScheduled = false;
  #closed = false;
  batchesSent = 0;

  constructor(options: ZmqKvPublisherOptions) {
    this.options = {
      host: '127.0.0.1',
      replay: false,
      topic: '',
      bufferSteps: 10_000,
      sendHighWaterMark: 100_000,
      vllmHashes: null,
      ...options,
    };
    if (this.options.vllmHashes !== null && this.options.format !== 'vllm')
      throw new KvsentinelError('internal', `vllmHashes needs format vllm, not ${this.options.format}`);
  }

  /** rank 0's PUB endpoint (rank r at port + r) */
  get endpoint(): string {
    return `tcp://${this.options.host}:${this.#base}`;
  }

  get replayEndpoint(): string | null {
    return this.options.replay ? `tcp://${this.options.host}:${this.#replayBase}` : null;
  }

  async start(): Promise<void> {
    const { host, ranks } = this.options;
    const pubs = await bindConsecutive(
      host,
      ranks,
      () => new Publisher({ linger: 0, sendHighWaterMark: this.options.sendHighWaterMark }),
    );
    this.#base = pubs.base;
    let routers: Router[] = [];
    if (this.options.replay) {
      const bound = await bindConsecutive(host, ranks, () => new Router({ linger: 0 }));
      this.#replayBase = bound.base;
      routers = bound.sockets as Router[];
    }
    this.#ranks = pubs.sockets.map((pub, r) => ({
      pub: pub as Publisher,
      router: routers[r] ?? null,
      seq: 0n,
      buffer: [],
      published: new Set(),
      vllm: new Map(),
      pending: [],
    }));
    for (const r of this.#ranks) if (r.router !== null) void this.#serveReplay(r, r.router);
  }

  async stop(): Promise<void> {
    this.#closed = true;
    for (const r of this.#ranks) {
      r.pub.close();
      r.router?.close();
    }
    await Promise.resolve();
  }

  /** One event of a rank's cache manager (the simulator's KvEvent); published with the next flush. */
  publish(rank: number, event: KvEvent): void {
    const r = this.#ranks[rank];
    if (r === undefined || this.#closed) return;
    const wire = this.#event(r, event);
    if (wire === null) return;
    r.pending.push(wire);
    if (!this.#flushScheduled) {
      this.#flushScheduled = true;
      // a flush scheduled just before stop() finds the sockets closed: that is the end of the stream, not a fault
      setImmediate(() => {
        this.flush().catch((err: unknown) => {
          if (!this.#closed) throw err;
        });
      });
    }
  }

  /** Sends every rank's pending events as one batch each. */
  async flush(): Promise<void> {
    this.#flushScheduled = false;
    for (let rank = 0; rank < this.#ranks.length && !this.#closed; rank++) {
      const r = this.#ranks[rank]!;
      if (r.pending.length === 0) continue;
      const events = r.pending;
      r.pending = [];
      await this.sendBatch(rank, this.batch(rank, events));
    }
  }

  /** Sends one encoded batch document as the rank's next seq (tests use it to craft batches). */
  async sendBatch(rank: number, batch: Wire): Promise<bigint> {
    const r = this.#ranks[rank]!;
    const seq = r.seq++;
    const payload = encoder.encode(batch);
    if (this.#dropForever > 0) {
      this.#dropForever--; // a full publisher queue: the seq is used, nothing is sent or buffered
      return seq;
    }
    r.buffer.push({ seq, payload });
    if (r.buffer.length > this.options.bufferSteps) r.buffer.shift();
    if (this.#dropLive > 0) {
      this.#dropLive--; // lost on the way (a subscriber past its HWM): replay still has it
      return seq;
    }
    await r.pub.send([this.options.topic, encodeSeq(seq), payload]);
    this.batchesSent++;
    return seq;
  }

  /** Fault: the next `n` batches never reach subscribers live; `replayable` keeps them in the replay buffer. */
  dropNext(n: number, replayable: boolean): void {
    if (replayable) this.#dropLive += n;
    else this.#dropForever += n;
  }

  /** Fault: frames no engine sends. */
  async sendGarbage(rank = 0): Promise<void> {
    const r = this.#ranks[rank]!;
    await r.pub.send(['', 'not-a-seq']);
    await r.pub.send([this.options.topic, encodeSeq(r.seq++), new Uint8Array([0xc1, 0xff, 0x00])]);
  }

  /** The worker restarted at the same address: seq from 0, nothing buffered, nothing known. */
  restart(): void {
    for (const r of this.#ranks) {
      r.seq = 0n;
      r.buffer.length = 0;
      r.published.clear();
      r.vllm.clear();
      r.pending = [];
    }
  }

  async #serveReplay(r: RankPublisher, router: Router): Promise<void> {
    try {
      for await (const frames of router) {
        const [id, , start] = frames;
        if (id === undefined || start === undefined || start.length !== 8) continue;
        const from = start.readBigUInt64BE(0);
        for (const b of [...r.buffer]) {
          if (b.seq < from) continue;
          await router.send(
            this.options.format === 'trtllm'
              ? [id, '', this.options.topic, encodeSeq(b.seq), b.payload]
              : [id, '', encodeSeq(b.seq), b.payload],
          );
        }
        await router.send(
          this.options.format === 'trtllm' ? [id, '', '', END_SEQ_FRAME, ''] : [id, '', END_SEQ_FRAME, ''],
        );
      }
    } catch {
      // closed
    }
  }

  /** The batch envelope of the format around already-encoded events. */
  batch(rank: number, events: Wire[]): Wire {
    const ts = Date.now() / 1000;
    switch (this.options.format) {
      case 'trtllm':
        return [ts, events, rank];
      case 'vllm':
        return { ts, events, data_parallel_rank: rank };
      case 'vllm-array':
        return [ts, events];
      case 'sglang':
        return [ts, events, rank];
    }
  }

  /** A vLLM hash as maybe_convert_block_hash puts it on the wire. */
  #vllmWire(hash: Uint8Array | undefined): Wire | null {
    if (hash === undefined) return null;
    return this.options.vllmHashes?.ints === true ? int(vllmIntBlockHash(hash)) : hash;
  }

  #hash(v: bigint): number | bigint {
    const signed = this.options.format === 'trtllm' || this.options.format === 'sglang';
    return int(signed ? BigInt.asIntN(64, v) : v);
  }

  #event(r: RankPublisher, event: KvEvent): Wire | null {
    const d = event.data;
    const arrays = this.options.format === 'vllm-array';
    if (d.type === 'all_cleared') {
      r.published.clear();
      r.vllm.clear();
      return arrays ? ['AllBlocksCleared'] : { type: 'AllBlocksCleared' };
    }
    if (d.type === 'removed') {
      const hashes = d.blockHashes.filter((h): h is bigint => typeof h === 'bigint' && r.published.delete(h));
      if (hashes.length === 0) return null;
      const wire = hashes.map((h) => this.#vllmWire(r.vllm.get(h)) ?? this.#hash(h));
      for (const h of hashes) r.vllm.delete(h);
      if (arrays) return ['BlockRemoved', wire, 'GPU'];
      return { type: 'BlockRemoved', block_hashes: wire, medium: 'GPU' };
    }
    if (d.type !== 'stored') return null; // streaming publishes no created / updated events
    const full = d.blocks.filter((b) => b.tokens.length === this.options.blockSize && typeof b.blockHash === 'bigint');
    if (full.length === 0) return null;
    for (const b of full) r.published.add(b.blockHash as bigint);
    const tokens: number[] = [];
    for (const b of full) for (const t of b.tokens) tokens.push(t);
    const vllm = this.options.vllmHashes;
    if (vllm !== null) {
      // the parent's vLLM hash: NONE_HASH for a root, else what this rank published for it (a parent it never
      // published — stored before a restart — chains from nothing kvsentinel could know either)
      let parent =
        d.parentHash === null
          ? vllmNoneHash(vllm.seed)
          : typeof d.parentHash === 'bigint'
            ? r.vllm.get(d.parentHash)
            : undefined;
      if (parent === undefined) return null;
      const parentWire = d.parentHash === null ? null : this.#vllmWire(parent)!;
      const hashes: Wire[] = [];
      for (const b of full) {
        parent = vllmBlockHash(parent, b.tokens);
        r.vllm.set(b.blockHash as bigint, parent);
        hashes.push(this.#vllmWire(parent));
      }
      return {
        type: 'BlockStored',
        block_hashes: hashes,
        parent_block_hash: parentWire,
        token_ids: tokens,
        block_size: this.options.blockSize,
        lora_id: null,
        medium: 'GPU',
        lora_name: null,
        extra_keys: full.map(() => null),
      };
    }
    const hashes = full.map((b) => this.#hash(b.blockHash as bigint));
    const parent = typeof d.parentHash === 'bigint' ? this.#hash(d.parentHash) : null;
    if (arrays) return ['BlockStored', hashes, parent, tokens, this.options.blockSize, null, 'GPU'];
    // the map form both engines share; SGLang adds its salt and session, both name the LoRA
    const stored = {
      type: 'BlockStored',
      block_hashes: hashes,
      parent_block_hash: parent,
      token_ids: tokens,
      block_size: this.options.blockSize,
      lora_id: null,
      medium: 'GPU',
    };
    if (this.options.format === 'sglang') return { ...stored, cache_salt: null, session_id: null, lora_name: null };
    return { ...stored, lora_name: null };
  }
}
