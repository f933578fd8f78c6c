// The fast path of decode-batch.ts: reads a KV-event batch straight from its msgpack bytes into the StreamBatch the
// converter takes, with no document in between: keys are matched as bytes, block hashes become their u64 directly
// (an int64's bytes are its value modulo 2^64), token ids go into one Uint32Array per event, and values nothing
// reads are only walked over. It takes only the shapes every engine publishes when nothing is wrong; anything else
// (a bad event, a float hash, SGLang's bigram token pairs, malformed bytes, an ext type, a non-string key) returns
// null and the batch is decoded the reference way, which names the problem. So on what it accepts its result is
// the reference's, value for value (batch-reader.test.ts holds it to that on random batches).
import { isVllmExtraKey, type VllmExtraKey } from '../hashing/vllm-block-hash.js';
import type { StreamBatch, StreamBatchDecode, StreamEvent } from './decode-batch.js';
import { MsgpackReader as Reader, OTHER, PROTO } from './msgpack-reader.js';

const keyBytes = (k: string): Uint8Array => new TextEncoder().encode(k);
const K = {
  type: keyBytes('type'),
  block_hashes: keyBytes('block_hashes'),
  parent_block_hash: keyBytes('parent_block_hash'),
  token_ids: keyBytes('token_ids'),
  block_size: keyBytes('block_size'),
  lora_id: keyBytes('lora_id'),
  medium: keyBytes('medium'),
  lora_name: keyBytes('lora_name'),
  extra_keys: keyBytes('extra_keys'),
  group_idx: keyBytes('group_idx'),
  kv_cache_spec_sliding_window: keyBytes('kv_cache_spec_sliding_window'),
  cache_salt: keyBytes('cache_salt'),
  mm_keys: keyBytes('mm_keys'),
  ts: keyBytes('ts'),
  events: keyBytes('events'),
  data_parallel_rank: keyBytes('data_parallel_rank'),
  attn_dp_rank: keyBytes('attn_dp_rank'),
};
const TAGS = { stored: 'BlockStored', removed: 'BlockRemoved', cleared: 'AllBlocksCleared' } as const;

/** One event's fields as read; `undefined`: absent. */
interface Slots {
  tag: string | null | undefined;
  hashes: { readonly values: bigint[]; readonly bytes: (Uint8Array | null)[] | null } | undefined;
  parent: { readonly hash: bigint | null; readonly bytes: Uint8Array | null } | undefined;
  tokens: Uint32Array | undefined;
  blockSize: number | null | undefined;
  loraId: number | null | undefined;
  medium: string | null | undefined;
  loraName: string | null | undefined;
  extra: unknown;
  groupIdx: number | null | undefined;
  window: number | null | undefined;
  salt: string | null | undefined;
  mm: unknown;
}

const noSlots = (): Slots => ({
  tag: undefined,
  hashes: undefined,
  parent: undefined,
  tokens: undefined,
  blockSize: undefined,
  loraId: undefined,
  medium: undefined,
  loraName: undefined,
  extra: undefined,
  groupIdx: undefined,
  window: undefined,
  salt: undefined,
  mm: undefined,
});

/** A map event's field into its slot (the last of equal keys wins, as in a decoded map). */
function mapField(r: Reader, s: Slots, start: number, len: number): void {
  const is = (k: Uint8Array): boolean => r.keyIs(start, len, k);
  if (is(K.type)) s.tag = r.optString();
  else if (is(K.block_hashes)) s.hashes = r.hashes();
  else if (is(K.parent_block_hash)) s.parent = r.hash();
  else if (is(K.token_ids)) s.tokens = r.tokens();
  else if (is(K.block_size)) s.blockSize = r.optCount();
  else if (is(K.lora_id)) s.loraId = r.optCount();
  else if (is(K.medium)) s.medium = r.optString();
  else if (is(K.lora_name)) s.loraName = r.optString();
  else if (is(K.extra_keys)) s.extra = r.generic();
  else if (is(K.group_idx)) s.groupIdx = r.optCount();
  else if (is(K.kv_cache_spec_sliding_window)) s.window = r.optCount();
  else if (is(K.cache_salt)) s.salt = r.optString();
  else if (is(K.mm_keys)) s.mm = r.generic();
  else r.skip(1);
}

/** A positional event's element `i` (tag first, then the fields in their declaration order). */
function arrayField(r: Reader, s: Slots, i: number): void {
  if (i === 0) {
    s.tag = r.optString();
    return;
  }
  if (s.tag === TAGS.removed) {
    if (i === 1) s.hashes = r.hashes();
    else if (i === 2) s.medium = r.optString();
    else if (i === 3) s.groupIdx = r.optCount();
    else r.skip(1);
    return;
  }
  if (s.tag !== TAGS.stored) return r.skip(1);
  if (i === 1) s.hashes = r.hashes();
  else if (i === 2) s.parent = r.hash();
  else if (i === 3) s.tokens = r.tokens();
  else if (i === 4) s.blockSize = r.optCount();
  else if (i === 5) s.loraId = r.optCount();
  else if (i === 6) s.medium = r.optString();
  else if (i === 7) s.loraName = r.optString();
  else if (i === 8) s.extra = r.generic();
  else if (i === 9) s.groupIdx = r.optCount();
  else if (i === 11) s.window = r.optCount();
  else r.skip(1);
}

function toExtraKeys(v: unknown, blocks: number): (VllmExtraKey | null)[] | null {
  if (!Array.isArray(v) || v.length !== blocks) return null;
  const list = v as readonly unknown[];
  return list.every((k) => k === null || isVllmExtraKey(k)) ? (list as (VllmExtraKey | null)[]) : null;
}

function event(r: Reader): StreamEvent {
  const s = noSlots();
  const fields = r.mapSize();
  const positional = fields < 0;
  if (positional) {
    const n = r.arrayLength();
    if (n < 1) throw OTHER;
    for (let i = 0; i < n; i++) arrayField(r, s, i);
  } else {
    for (let i = 0; i < fields; i++) {
      const start = mapKey(r);
      mapField(r, s, start, r.pos - start);
    }
  }
  if (s.tag === TAGS.cleared) return { type: 'all_cleared' };
  if (s.hashes === undefined) throw OTHER;
  if (s.tag === TAGS.removed)
    return { type: 'removed', blockHashes: s.hashes.values, medium: s.medium ?? null, groupIdx: s.groupIdx ?? null };
  if (s.tag !== TAGS.stored || s.blockSize === undefined || s.blockSize === null) throw OTHER;
  const extra = s.extra;
  const mm = positional ? undefined : s.mm;
  return {
    type: 'stored',
    blockHashes: s.hashes.values,
    blockHashBytes: s.hashes.bytes,
    parentHashBytes: s.parent?.bytes ?? null,
    blockExtraKeys: toExtraKeys(extra, s.hashes.values.length),
    parentHash: s.parent?.hash ?? null,
    tokens: s.tokens ?? new Uint32Array(0),
    blockSize: s.blockSize,
    loraId: s.loraId === undefined || s.loraId === null ? null : BigInt(s.loraId),
    medium: s.medium ?? null,
    loraName: s.loraName ?? null,
    cacheSalt: positional ? null : (s.salt ?? null),
    groupIdx: s.groupIdx ?? null,
    slidingWindow: s.window ?? null,
    extraKeys:
      (Array.isArray(extra) && extra.some((k) => k !== null)) ||
      (Array.isArray(mm) && mm.some((k) => Array.isArray(k) && k.length > 0)),
  };
}

/** Reads a map's key (refusing `__proto__`) and returns where it starts; the reader is left after it. */
function mapKey(r: Reader): number {
  const len = r.strLength();
  if (len < 0) throw OTHER;
  r.need(len);
  const start = r.pos;
  if (r.keyIs(start, len, PROTO)) throw OTHER;
  r.pos += len;
  return start;
}

function events(r: Reader): StreamEvent[] {
  const n = r.arrayLength();
  if (n < 0) throw OTHER;
  const out: StreamEvent[] = [];
  for (let i = 0; i < n; i++) out.push(event(r));
  return out;
}

function envelope(r: Reader): StreamBatch {
  let ts: number | null = null;
  let list: StreamEvent[] | null = null;
  let rank: number | null = null;
  let publisherId: Uint8Array | null = null;
  const size = r.mapSize();
  if (size >= 0) {
    let dp: number | null = null;
    let attn: number | null = null;
    for (let i = 0; i < size; i++) {
      const start = mapKey(r);
      const len = r.pos - start;
      if (r.keyIs(start, len, K.ts)) ts = r.ts();
      else if (r.keyIs(start, len, K.events)) list = events(r);
      else if (r.keyIs(start, len, K.data_parallel_rank)) dp = r.optCount();
      else if (r.keyIs(start, len, K.attn_dp_rank)) attn = r.optCount();
      else r.skip(1);
    }
    rank = dp ?? attn;
  } else {
    const n = r.arrayLength();
    if (n < 2) throw OTHER;
    ts = r.ts();
    list = events(r);
    if (n > 2) rank = r.optCount();
    if (n > 3) {
      const h = r.bytes[r.pos];
      if (h === 0xc4 || h === 0xc5 || h === 0xc6) {
        r.pos++;
        const len = h === 0xc4 ? r.head() : h === 0xc5 ? r.u16() : r.u32();
        r.need(len);
        if (len > 0) publisherId = r.bytes.subarray(r.pos, r.pos + len);
        r.pos += len;
      } else r.skip(1);
    }
    for (let i = 4; i < n; i++) r.skip(1);
  }
  if (list === null) throw OTHER;
  return { ts, rank, ...(publisherId !== null ? { publisherId } : {}), events: list };
}

/** The batch, when it is one of the shapes read here without a problem; null: decode it the reference way. */
export function readStreamBatch(payload: Uint8Array): StreamBatchDecode | null {
  const r = new Reader(payload);
  try {
    const batch = envelope(r);
    if (r.pos !== payload.length) return null;
    return { batch, issues: [] };
  } catch {
    // OTHER, or the reference decoder's own error on a value read whole: the reference path reports it
    return null;
  }
}
