// Decodes one msgpack KV-event batch of a ZMQ stream, in every shape the three engines have published:
//   batch: [ts, events] (older vLLM / SGLang), [ts, events, rank] (TensorRT-LLM, SGLang with attention DP),
//          {ts, events, data_parallel_rank} (newer vLLM), {…, attn_dp_rank}
//   event: a map tagged "type" (TensorRT-LLM, newer vLLM) or a positional array with the tag first (older vLLM,
//          SGLang): ["BlockStored", block_hashes, parent_block_hash, token_ids, block_size, lora_id, medium, …],
//          ["BlockRemoved", block_hashes, medium, group_idx], ["AllBlocksCleared"]
// SGLang's EAGLE bigram pages give each token id as a [token, next] pair; the first is the page's token.
// Hashes are exact: msgpack int64/uint64 decode as bigint and every integer is taken modulo 2^64, so TensorRT-LLM's
// signed int64 (negative above 2^63) and vLLM's unsigned values land on the same u64 the pull path uses; a bytes
// hash (vLLM without VLLM_KV_EVENTS_USE_INT_BLOCK_HASHES) becomes its low 8 bytes big-endian, as vLLM's own int
// conversion does. A bad event is skipped with an issue naming its position; a bad envelope rejects the batch.
// Batches in the usual shapes are read straight from their bytes (batch-reader.ts); the rest, and every batch with a
// problem, by decoding the document first (the reference, which names the problem).
import { decode } from '@msgpack/msgpack';
import { readStreamBatch } from './batch-reader.js';
import { KvsentinelError } from '../errors.js';
import { isVllmExtraKey, type VllmExtraKey } from '../hashing/vllm-block-hash.js';
import type { WireIssue } from '../wire/wire-issue.js';
import type { WireIssueCode } from '../wire/wire-issue-codes.js';

export interface StreamStored {
  readonly type: 'stored';
  readonly blockHashes: readonly bigint[];
  readonly parentHash: bigint | null;
  /** all blocks' tokens, concatenated; null when some token id is not an integer (multimodal placeholders) */
  readonly tokens: Uint32Array | null;
  /** tokens per block as the event states it */
  readonly blockSize: number;
  readonly loraId: bigint | null;
  /** the adapter's name (vLLM, SGLang): part of the block's identity, as the engine's hash includes it */
  readonly loraName: string | null;
  /** SGLang's per-request cache_salt (map events): blocks of different salts are different blocks */
  readonly cacheSalt: string | null;
  readonly medium: string | null;
  readonly groupIdx: number | null;
  readonly slidingWindow: number | null;
  /** extra_keys or mm_keys present: the hash depends on more than the tokens */
  readonly extraKeys: boolean;
  /** the hashes as published when they were bytes (vLLM without int hashes), null when all were integers */
  readonly blockHashBytes: readonly (Uint8Array | null)[] | null;
  readonly parentHashBytes: Uint8Array | null;
  /**
   * vLLM's extra_keys, one entry per block (null = None), when the event carries them and each is reproducible;
   * null when it does not (older vLLM, other engines) — the hash may then cover keys the stream does not show
   */
  readonly blockExtraKeys: readonly (VllmExtraKey | null)[] | null;
}

export interface StreamRemoved {
  readonly type: 'removed';
  readonly blockHashes: readonly bigint[];
  readonly medium: string | null;
  readonly groupIdx: number | null;
}

export type StreamEvent = StreamStored | StreamRemoved | { readonly type: 'all_cleared' };

export interface StreamBatch {
  /** publisher time, seconds since the epoch (null when absent) */
  readonly ts: number | null;
  /** data_parallel_rank / attn_dp_rank the batch states, null when it states none */
  readonly rank: number | null;
  /** vLLM snapshot mode: the publisher life's 16-byte id, the batch's last element (IdentifiedKVEventBatch) */
  readonly publisherId?: Uint8Array;
  readonly events: readonly StreamEvent[];
}

export interface StreamBatchDecode {
  readonly batch: StreamBatch | null;
  readonly issues: readonly WireIssue[];
}

const MAX_ISSUES = 16;
const U64 = 64;
/** the positional order of each event's fields (older vLLM, SGLang), after the tag */
export const STORED_FIELDS = [
  'block_hashes',
  'parent_block_hash',
  'token_ids',
  'block_size',
  'lora_id',
  'medium',
  'lora_name',
  'extra_keys',
  'group_idx',
  'kv_cache_spec_kind',
  'kv_cache_spec_sliding_window',
] as const;
export const REMOVED_FIELDS = ['block_hashes', 'medium', 'group_idx'] as const;

class BadValue extends KvsentinelError {
  readonly issue: WireIssueCode;
  readonly path: string;

  constructor(issue: WireIssueCode, path: string, message: string) {
    super('wire-value-invalid', message);
    this.issue = issue;
    this.path = path;
  }
}

type Fields = (name: string) => unknown;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);
}

function own(record: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

function toHash(v: unknown, path: string): bigint {
  if (typeof v === 'bigint') return BigInt.asUintN(U64, v);
  if (typeof v === 'number') {
    if (!Number.isInteger(v)) throw new BadValue('hash-float', path, `${path}: the hash ${v} is not an integer`);
    if (!Number.isSafeInteger(v))
      throw new BadValue('hash-float', path, `${path}: the hash ${v} was encoded as a float (precision lost)`);
    return BigInt.asUintN(U64, BigInt(v));
  }
  if (v instanceof Uint8Array) {
    if (v.length === 0) throw new BadValue('wrong-type', path, `${path}: an empty bytes hash`);
    let out = 0n;
    for (let i = Math.max(0, v.length - 8); i < v.length; i++) out = (out << 8n) | BigInt(v[i]!);
    return out;
  }
  throw new BadValue('wrong-type', path, `${path}: a hash must be an integer or bytes, got ${describe(v)}`);
}

function bytesOf(v: unknown): Uint8Array | null {
  return v instanceof Uint8Array ? v : null;
}

function toExtraKeys(v: unknown, blocks: number): (VllmExtraKey | null)[] | null {
  if (!Array.isArray(v) || v.length !== blocks) return null;
  const list = v as readonly unknown[];
  return list.every((k) => k === null || isVllmExtraKey(k)) ? (list as (VllmExtraKey | null)[]) : null;
}

function toHashes(v: unknown, path: string): bigint[] {
  if (!Array.isArray(v))
    throw new BadValue('wrong-type', path, `${path}: expected a list of hashes, got ${describe(v)}`);
  return v.map((h, i) => toHash(h, `${path}[${i}]`));
}

function toCount(v: unknown, path: string): number {
  const n = typeof v === 'bigint' && v >= 0n && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0)
    throw new BadValue('wrong-type', path, `${path}: expected a non-negative integer, got ${describe(v)}`);
  return n;
}

function optCount(v: unknown, path: string): number | null {
  return v === null || v === undefined ? null : toCount(v, path);
}

function optString(v: unknown, path: string): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v !== 'string') throw new BadValue('wrong-type', path, `${path}: expected a string, got ${describe(v)}`);
  return v;
}

function toTokens(v: unknown, path: string): Uint32Array | null {
  if (!Array.isArray(v))
    throw new BadValue('wrong-type', path, `${path}: expected a list of token ids, got ${describe(v)}`);
  const list = v as readonly unknown[];
  const out = new Uint32Array(list.length);
  for (let i = 0; i < list.length; i++) {
    const t = list[i];
    // SGLang's EAGLE bigram pages publish each position as [token, next token]: the page's token is the first
    const id = Array.isArray(t) && t.length === 2 ? (t as readonly unknown[])[0] : t;
    if (typeof id === 'number' && Number.isInteger(id) && id >= 0 && id <= 0xffff_ffff) out[i] = id;
    else if (typeof t === 'string')
      return null; // TensorRT-LLM's EventTokenId may be a string (multimodal)
    else
      throw new BadValue(
        'token-id-out-of-range',
        `${path}[${i}]`,
        `${path}[${i}]: ${describe(t)} is not a token id (0..2^32-1)`,
      );
  }
  return out;
}

function describe(v: unknown): string {
  if (v === null) return 'nil';
  if (v instanceof Uint8Array) return `${v.length} bytes`;
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'bigint') return `${v}`;
  if (typeof v === 'string') return `"${v.length > 40 ? `${v.slice(0, 40)}…` : v}"`;
  if (typeof v === 'number' || typeof v === 'boolean') return `${typeof v} ${v}`;
  return v === undefined ? 'nothing' : 'a map';
}

/** Field access for a map event, or a positional one (tag first, then the fields in declaration order). */
function fieldsOf(v: unknown, names: readonly string[]): Fields {
  if (Array.isArray(v)) {
    const list = v as readonly unknown[];
    return (name) => list[names.indexOf(name) + 1];
  }
  const record = v as Record<string, unknown>;
  return (name) => own(record, name);
}

function decodeEvent(v: unknown, path: string): StreamEvent {
  if (!Array.isArray(v) && !isRecord(v))
    throw new BadValue('wrong-type', path, `${path}: an event must be a map or a tagged array, got ${describe(v)}`);
  const tag: unknown = Array.isArray(v) ? (v as readonly unknown[])[0] : own(v, 'type');
  if (tag === 'BlockStored') {
    const field = fieldsOf(v, STORED_FIELDS);
    const hashes = field('block_hashes');
    if (hashes === undefined)
      throw new BadValue('missing-field', `${path}.block_hashes`, `${path}: BlockStored without block_hashes`);
    const parent = field('parent_block_hash');
    const extra = field('extra_keys');
    const mm = Array.isArray(v) ? undefined : own(v, 'mm_keys');
    const blockHashes = toHashes(hashes, `${path}.block_hashes`);
    const raw = hashes as readonly unknown[];
    return {
      type: 'stored',
      blockHashes,
      blockHashBytes: raw.some((h) => h instanceof Uint8Array) ? raw.map(bytesOf) : null,
      parentHashBytes: bytesOf(parent),
      blockExtraKeys: toExtraKeys(extra, blockHashes.length),
      parentHash: parent === null || parent === undefined ? null : toHash(parent, `${path}.parent_block_hash`),
      tokens: toTokens(field('token_ids') ?? [], `${path}.token_ids`),
      blockSize: toCount(field('block_size'), `${path}.block_size`),
      loraId: (() => {
        const lora = field('lora_id');
        return lora === null || lora === undefined ? null : BigInt(toCount(lora, `${path}.lora_id`));
      })(),
      medium: optString(field('medium'), `${path}.medium`),
      loraName: optString(field('lora_name'), `${path}.lora_name`),
      cacheSalt: Array.isArray(v) ? null : optString(own(v, 'cache_salt'), `${path}.cache_salt`),
      groupIdx: optCount(field('group_idx'), `${path}.group_idx`),
      slidingWindow: optCount(field('kv_cache_spec_sliding_window'), `${path}.kv_cache_spec_sliding_window`),
      extraKeys:
        (Array.isArray(extra) && extra.some((k) => k !== null)) ||
        (Array.isArray(mm) && mm.some((k) => Array.isArray(k) && k.length > 0)),
    };
  }
  if (tag === 'BlockRemoved') {
    const field = fieldsOf(v, REMOVED_FIELDS);
    const hashes = field('block_hashes');
    if (hashes === undefined)
      throw new BadValue('missing-field', `${path}.block_hashes`, `${path}: BlockRemoved without block_hashes`);
    return {
      type: 'removed',
      blockHashes: toHashes(hashes, `${path}.block_hashes`),
      medium: optString(field('medium'), `${path}.medium`),
      groupIdx: optCount(field('group_idx'), `${path}.group_idx`),
    };
  }
  if (tag === 'AllBlocksCleared') return { type: 'all_cleared' };
  throw new BadValue(
    'unknown-event-type',
    `${path}.type`,
    `${path}: unknown event type ${describe(tag)} (expected BlockStored, BlockRemoved or AllBlocksCleared)`,
  );
}

function toTs(v: unknown): number | null {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'bigint') return Number(v);
  return null;
}

/** Decodes a batch payload; never throws. */
export function decodeStreamBatch(payload: Uint8Array): StreamBatchDecode {
  return readStreamBatch(payload) ?? decodeStreamBatchReference(payload);
}

/** The reference decode: the whole document first, then its batch (every shape, every problem named). */
export function decodeStreamBatchReference(payload: Uint8Array): StreamBatchDecode {
  let doc: unknown;
  try {
    doc = decode(payload, { useBigInt64: true });
  } catch (err) {
    return {
      batch: null,
      issues: [
        {
          code: 'stream-not-msgpack',
          message: `payload (${payload.length} bytes) is not msgpack: ${err instanceof Error ? err.message : String(err)}`,
          path: 'payload',
          offset: null,
        },
      ],
    };
  }
  let ts: unknown;
  let events: unknown;
  let rank: unknown;
  let publisherId: unknown;
  if (Array.isArray(doc) && doc.length >= 2) [ts, events, rank, publisherId] = doc as readonly unknown[];
  else if (isRecord(doc)) {
    ts = own(doc, 'ts');
    events = own(doc, 'events');
    rank = own(doc, 'data_parallel_rank') ?? own(doc, 'attn_dp_rank');
  }
  if (!Array.isArray(events)) {
    return {
      batch: null,
      issues: [
        {
          code: 'stream-bad-batch',
          message: `payload: a batch is [ts, events, rank?] or {ts, events, data_parallel_rank}, got ${describe(doc)}`,
          path: 'payload',
          offset: null,
        },
      ],
    };
  }
  const issues: WireIssue[] = [];
  let batchRank: number | null = null;
  try {
    batchRank = optCount(rank, '$.data_parallel_rank');
  } catch (err) {
    if (!(err instanceof BadValue)) throw err;
    issues.push({ code: err.issue, message: err.message, path: err.path, offset: null });
  }
  const out: StreamEvent[] = [];
  let suppressed = 0;
  for (let i = 0; i < events.length; i++) {
    try {
      out.push(decodeEvent(events[i], `$.events[${i}]`));
    } catch (err) {
      if (!(err instanceof BadValue)) throw err;
      if (issues.length < MAX_ISSUES)
        issues.push({ code: err.issue, message: err.message, path: err.path, offset: null });
      else suppressed++;
    }
  }
  if (suppressed > 0)
    issues.push({
      code: 'issues-suppressed',
      message: `${suppressed} more bad events in this batch`,
      path: '$.events',
      offset: null,
    });
  const id = publisherId instanceof Uint8Array && publisherId.length > 0 ? publisherId : null;
  return {
    batch: { ts: toTs(ts), rank: batchRank, ...(id !== null ? { publisherId: id } : {}), events: out },
    issues,
  };
}
