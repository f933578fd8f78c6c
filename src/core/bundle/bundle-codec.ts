// One line of a bundle's observations.jsonl: an observation plus the digest computed at record time. Prompts never
// leave the process unless the bundle was recorded with --include-prompts: decisions carry their router-style and
// worker-style block keys (hashes, not token ids), stored blocks their token counts and hash-check results.
// Block hashes are strings (u64 as unsigned decimal, v2_sha256 as its 64-char hex), so plain JSON.parse is exact;
// key arrays are base64 of little-endian u64s, shared with the previous turn of the same trajectory where they agree.
import { formatWireHash } from '../hashing/block-key.js';
import { PROMPT_FORMS, REQUEST_UNREADABLE_REASONS } from '../relay/request-unreadable.js';
import type { HashCheck, StoredEventCheck } from '../state/hash-verifier.js';
import type { DecisionKeys, ObservationDigest } from '../state/observation-digester.js';
import { LruMap } from '../state/lru-map.js';
import { ROUTER_PROFILES, type Observation, type RenderCheckObservation, type RouterProfile } from '../observe/observation.js';
import { RENDER_DRIFT_CAUSES, type RenderDiff, type RenderDriftCause } from '../render/compare-renders.js';
import { isVllmHashAlgo } from '../hashing/vllm-block-hash.js';
import { isStreamEngine, type StreamOrigin } from '../stream/stream-engine.js';
import { isHashAlgo, type HashAlgo, type KvEvent, type KvEventData, type MmKey, type StoredBlock, type WireBlockHash } from '../wire/kv-event.js';
import { decimalFitsU64 } from '../wire/u64-decimal.js';
import type { WireIssue } from '../wire/wire-issue.js';
import { decodeU64Base64, encodeU64Base64 } from './u64-base64.js';

export const BUNDLE_FORMAT = 'kvsentinel-bundle';
export const BUNDLE_VERSION = 1;
/** trajectories whose last keys are remembered for prefix sharing (writer and reader must agree: see manifest) */
export const DEFAULT_KEY_HISTORY = 4096;

export interface BundleRecord {
  readonly observation: Observation;
  readonly digest: ObservationDigest | null;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const NO_TOKENS = new Uint32Array(0);
const NO_MM_KEYS_JSON: Json[] = [];
const CHECK_CODES: Record<HashCheck, string> = { match: 'm', mismatch: 'x', unverifiable: 'u' };

class DecodeError extends Error {
  readonly path: string;

  constructor(path: string, message: string) {
    super(message);
    this.path = path;
  }
}

/** Character loops, not regular expressions: every stored block and removed hash of a bundle passes through here. */
function hashIn(value: Json | undefined, path: string, suffix = '', index = -1): WireBlockHash {
  if (typeof value === 'string') {
    const n = value.length;
    if (n === 64) {
      let hex = true;
      for (let i = 0; hex && i < 64; i++) {
        const c = value.charCodeAt(i);
        hex = (c >= 48 && c <= 57) || (c >= 97 && c <= 102);
      }
      if (hex) return value;
    } else if (n >= 1 && n <= 20) {
      let v = 0;
      let digits = true;
      for (let i = 0; digits && i < n; i++) {
        const d = value.charCodeAt(i) - 48;
        digits = d >= 0 && d <= 9;
        v = v * 10 + d;
      }
      // up to 15 digits the double is exact; longer ones go through BigInt's own parser
      if (digits && n <= 15) return BigInt(v);
      if (digits && decimalFitsU64(value)) return BigInt(value);
    }
  }
  // the path is built only here: array items would otherwise pay for a path string each
  throw new DecodeError(index >= 0 ? `${path}${suffix}[${index}]` : path + suffix, 'expected a block hash (unsigned 64-bit decimal string or 64-char hex)');
}

/** Keys shared with the previous turn of a trajectory: remembered per correlation id, LRU. */
export class KeyHistory {
  readonly #lru: LruMap<string, Map<string, BigUint64Array>>;

  constructor(cap = DEFAULT_KEY_HISTORY) {
    this.#lru = new LruMap(cap);
  }

  take(correlationId: string | null): Map<string, BigUint64Array> | undefined {
    return correlationId === null ? undefined : this.#lru.get(correlationId);
  }

  remember(correlationId: string | null, arrays: Map<string, BigUint64Array>): void {
    if (correlationId !== null) this.#lru.set(correlationId, arrays);
  }
}

function commonPrefix(a: BigUint64Array, b: BigUint64Array): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

function encodeKeys(keys: DecisionKeys, correlationId: string | null, history: KeyHistory): JsonObject {
  const base = history.take(correlationId);
  const arrays = new Map<string, BigUint64Array>();
  const one = (name: string, arr: BigUint64Array): Json => {
    arrays.set(name, arr);
    const previous = base?.get(name);
    const shared = previous === undefined ? 0 : commonPrefix(previous, arr);
    return shared > 0 ? { p: shared, t: encodeU64Base64(arr.subarray(shared)) } : encodeU64Base64(arr);
  };
  const router: JsonObject = {};
  for (const [algo, arr] of keys.router) router[algo] = one(`r:${algo}`, arr);
  const worker: JsonObject = {};
  for (const [id, arr] of keys.worker) {
    // the worker keys are often the router's own array (same block size): say so instead of repeating them
    const same = [...keys.router.entries()].find(([, r]) => r === arr);
    worker[id] = same !== undefined ? { same: same[0] } : one(`w:${id}`, arr);
  }
  history.remember(correlationId, arrays);
  return { hashedTokens: keys.hashedTokens, tpb: keys.routerTokensPerBlock, router, worker };
}

function decodeKeys(value: Json | undefined, correlationId: string | null, history: KeyHistory, path: string): DecisionKeys {
  const obj = asObject(value, path);
  const base = history.take(correlationId);
  const arrays = new Map<string, BigUint64Array>();
  const one = (name: string, v: Json | undefined, p: string): BigUint64Array => {
    let out: BigUint64Array | null;
    if (typeof v === 'string') out = decodeU64Base64(v);
    else {
      const o = asObject(v, p);
      const shared = num(o.p, `${p}.p`);
      const tail = decodeU64Base64(str(o.t, `${p}.t`));
      const previous = base?.get(name);
      if (previous === undefined || previous.length < shared) throw new DecodeError(p, 'refers to keys of an earlier turn the bundle never gave');
      if (tail === null) out = null;
      else {
        out = new BigUint64Array(shared + tail.length);
        out.set(previous.subarray(0, shared));
        out.set(tail, shared);
      }
    }
    if (out === null) throw new DecodeError(p, 'expected base64 of u64 block keys');
    arrays.set(name, out);
    return out;
  };
  const router = new Map<HashAlgo, BigUint64Array>();
  for (const [algo, v] of Object.entries(asObject(obj.router, `${path}.router`))) {
    if (!isHashAlgo(algo)) throw new DecodeError(`${path}.router`, `unknown hash algorithm ${algo}`);
    router.set(algo, one(`r:${algo}`, v, `${path}.router.${algo}`));
  }
  const worker = new Map<string, BigUint64Array>();
  for (const [id, v] of Object.entries(asObject(obj.worker, `${path}.worker`))) {
    if (v !== null && typeof v === 'object' && !Array.isArray(v) && typeof v.same === 'string') {
      const arr = router.get(v.same as HashAlgo);
      if (arr === undefined) throw new DecodeError(`${path}.worker.${id}`, `refers to router keys ${v.same} that are absent`);
      worker.set(id, arr);
    } else {
      worker.set(id, one(`w:${id}`, v, `${path}.worker.${id}`));
    }
  }
  history.remember(correlationId, arrays);
  return {
    hashedTokens: num(obj.hashedTokens, `${path}.hashedTokens`),
    routerTokensPerBlock: num(obj.tpb, `${path}.tpb`),
    router,
    worker,
  };
}

function encodeEvent(event: KvEvent, includePrompts: boolean): JsonObject {
  const data = event.data;
  let d: JsonObject;
  switch (data.type) {
    case 'created':
      d = { type: 'created', numBlocksPerCacheLevel: [...data.numBlocksPerCacheLevel] };
      break;
    case 'stored':
      d = {
        type: 'stored',
        parentHash: data.parentHash === null ? null : formatWireHash(data.parentHash),
        blocks: data.blocks.map((b) => {
          const block: JsonObject = {
            blockHash: formatWireHash(b.blockHash),
            tokenCount: b.tokens.length,
            cacheLevel: b.cacheLevel,
            priority: b.priority,
            mmKeys: b.mmKeys.map((m) => ({ hash: m.hash, startOffset: m.startOffset })),
            cacheSalt: b.cacheSalt,
            loraId: b.loraId === null ? null : b.loraId.toString(10),
          };
          if (includePrompts) {
            block.tokens = Array.from(b.tokens);
            if (b.tokenExtraIds !== null) block.tokenExtraIds = Array.from(b.tokenExtraIds);
          } else if (b.tokenExtraIds !== null) {
            block.hasTokenExtraIds = true;
          }
          return block;
        }),
      };
      break;
    case 'removed':
      d = { type: 'removed', blockHashes: data.blockHashes.map(formatWireHash) };
      break;
    case 'updated':
      d = {
        type: 'updated',
        blockHash: formatWireHash(data.blockHash),
        cacheLevel: data.cacheLevel === null ? null : { newValue: data.cacheLevel.newValue, oldValue: data.cacheLevel.oldValue },
        priority: data.priority === null ? null : { newValue: data.priority.newValue, oldValue: data.priority.oldValue },
      };
      break;
    case 'all_cleared':
      d = { type: 'all_cleared' };
      break;
  }
  return {
    eventId: event.eventId,
    windowSize: event.windowSize,
    attentionDpRank: event.attentionDpRank,
    hashAlgo: event.hashAlgo,
    layerGroupId: event.layerGroupId,
    data: d,
  };
}

function encodeCheck(check: StoredEventCheck | null): Json {
  if (check === null) return null;
  return { checks: check.checks.map((c) => CHECK_CODES[c]).join(''), alt: check.alternative };
}

/** Serializes one record to a JSON line (without the newline). */
export function encodeBundleRecord(record: BundleRecord, history: KeyHistory, includePrompts: boolean): string {
  const obs = record.observation;
  let out: JsonObject;
  if (obs.kind === 'worker-events') {
    out = { kind: obs.kind, ts: obs.ts, server: obs.server, firstSeq: obs.firstSeq, events: obs.events.map((e) => encodeEvent(e, includePrompts)) };
    if (obs.stream !== undefined) {
      const hashing = obs.stream.vllmHashing;
      out.stream = { engine: obs.stream.engine, hashes: obs.stream.hashes, ...(hashing !== undefined ? { vllmHashing: { algo: hashing.algo, seedKnown: hashing.seedKnown } } : {}) };
    }
    if (record.digest?.kind === 'worker-events') out.digest = { stored: record.digest.digest.stored.map(encodeCheck) };
  } else if (obs.kind === 'decision') {
    out = {
      kind: obs.kind,
      ts: obs.ts,
      requestId: obs.requestId,
      correlationId: obs.correlationId,
      server: obs.server,
      promptTokens: includePrompts && obs.promptTokens !== null ? Array.from(obs.promptTokens) : null,
      promptTokenCount: obs.promptTokenCount ?? obs.promptTokens?.length ?? null,
      inflight: obs.inflight === null ? null : { ...obs.inflight },
    };
    if (obs.promptForm !== undefined) out.promptForm = obs.promptForm;
    if (obs.promptTokensFrom !== undefined) out.promptTokensFrom = obs.promptTokensFrom;
    if (obs.unreadable !== undefined) out.unreadable = obs.unreadable;
    if (record.digest?.kind === 'decision') out.digest = { keys: encodeKeys(record.digest.keys, obs.correlationId, history) };
  } else if (obs.kind === 'outcome') {
    // the worker's prompt ids stay in the process unless prompts are included; their keys go as the digest
    const { workerPromptTokens, ...rest } = obs;
    out = JSON.parse(JSON.stringify(rest)) as JsonObject;
    if (includePrompts && workerPromptTokens !== undefined && workerPromptTokens !== null) out.workerPromptTokens = Array.from(workerPromptTokens);
    if (record.digest?.kind === 'outcome') out.digest = { keys: encodeKeys(record.digest.keys, null, history) };
  } else if (obs.kind === 'render-check' && obs.diff !== null && !includePrompts) {
    // positions and cause only: the id windows are prompt token ids
    out = JSON.parse(JSON.stringify({ ...obs, diff: { ...obs.diff, routerWindow: [], workerWindow: [] } })) as JsonObject;
  } else {
    out = JSON.parse(JSON.stringify(obs)) as JsonObject;
  }
  return JSON.stringify(out);
}

// ---- decoding: every field checked, problems reported with their path ----

function asObject(value: Json | undefined, path: string, suffix = ''): JsonObject {
  if (value === null || value === undefined || typeof value !== 'object' || Array.isArray(value)) throw new DecodeError(path + suffix, 'expected an object');
  return value;
}
function num(value: Json | undefined, path: string, suffix = ''): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new DecodeError(path + suffix, 'expected a number');
  return value;
}
function numOrNull(value: Json | undefined, path: string, suffix = ''): number | null {
  return value === null || value === undefined ? null : num(value, path, suffix);
}
function str(value: Json | undefined, path: string, suffix = ''): string {
  if (typeof value !== 'string') throw new DecodeError(path + suffix, 'expected a string');
  return value;
}
function strOrNull(value: Json | undefined, path: string, suffix = ''): string | null {
  return value === null || value === undefined ? null : str(value, path, suffix);
}
function oneOfOrNull<T extends string>(value: Json | undefined, allowed: readonly T[], path: string): T | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) throw new DecodeError(path, `expected one of ${allowed.join(', ')}`);
  return value as T;
}
function boolOrNull(value: Json | undefined, path: string): boolean | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'boolean') throw new DecodeError(path, 'expected true or false');
  return value;
}
function algoOrNull(value: Json | undefined, path: string, suffix = ''): HashAlgo | null {
  if (value === null || value === undefined) return null;
  if (!isHashAlgo(value)) throw new DecodeError(path + suffix, 'expected a hash algorithm name');
  return value;
}
function profileOrNull(value: Json | undefined, path: string): RouterProfile | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string' || !(ROUTER_PROFILES as readonly string[]).includes(value)) throw new DecodeError(path, `expected one of ${ROUTER_PROFILES.join(', ')}`);
  return value as RouterProfile;
}
function arr(value: Json | undefined, path: string, suffix = ''): Json[] {
  if (!Array.isArray(value)) throw new DecodeError(path + suffix, 'expected an array');
  return value;
}
function tokens(value: Json | undefined, path: string, suffix = ''): Uint32Array {
  const a = arr(value, path, suffix);
  const out = new Uint32Array(a.length);
  a.forEach((v, i) => {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 0xffff_ffff) throw new DecodeError(`${path}${suffix}[${i}]`, 'expected a token id');
    out[i] = v;
  });
  return out;
}
function diff(value: Json | undefined, path: string, suffix = ''): { newValue: number | null; oldValue: number | null } | null {
  if (value === null || value === undefined) return null;
  const o = asObject(value, path, suffix);
  return { newValue: numOrNull(o.newValue, `${path}${suffix}.newValue`), oldValue: numOrNull(o.oldValue, `${path}${suffix}.oldValue`) };
}

const NO_MM_KEYS: readonly MmKey[] = Object.freeze([]);

/** One stored block; its token count goes to counts[index] (a bundle keeps counts, not tokens). */
function decodeBlock(value: Json, path: string, counts: number[], index: number): StoredBlock {
  const o = asObject(value, path);
  const blockTokens = o.tokens === undefined ? NO_TOKENS : tokens(o.tokens, path, '.tokens');
  counts[index] = o.tokenCount === undefined ? blockTokens.length : num(o.tokenCount, path, '.tokenCount');
  const loraId = strOrNull(o.loraId, path, '.loraId');
  const mm = arr(o.mmKeys ?? NO_MM_KEYS_JSON, path, '.mmKeys');
  return {
    blockHash: hashIn(o.blockHash, path, '.blockHash'),
    tokens: blockTokens,
    tokenExtraIds: o.tokenExtraIds === undefined ? null : tokens(o.tokenExtraIds, path, '.tokenExtraIds'),
    cacheLevel: num(o.cacheLevel, path, '.cacheLevel'),
    priority: numOrNull(o.priority, path, '.priority'),
    mmKeys:
      mm.length === 0
        ? NO_MM_KEYS
        : mm.map((m, i) => {
            const mo = asObject(m, `${path}.mmKeys[${i}]`);
            return { hash: str(mo.hash, `${path}.mmKeys[${i}].hash`), startOffset: num(mo.startOffset, `${path}.mmKeys[${i}].startOffset`) };
          }),
    cacheSalt: strOrNull(o.cacheSalt, path, '.cacheSalt'),
    loraId: loraId === null ? null : BigInt(loraId),
  };
}

function decodeEvent(value: Json, path: string): { event: KvEvent; tokenCounts: number[] | null } {
  const o = asObject(value, path);
  const d = asObject(o.data, path, '.data');
  const type = str(d.type, path, '.data.type');
  let data: KvEventData;
  let tokenCounts: number[] | null = null;
  switch (type) {
    case 'created':
      data = { type, numBlocksPerCacheLevel: arr(d.numBlocksPerCacheLevel, path, '.data.numBlocksPerCacheLevel').map((v, i) => num(v, `${path}.data.numBlocksPerCacheLevel[${i}]`)) };
      break;
    case 'stored': {
      const raw = arr(d.blocks, path, '.data.blocks');
      const blocks: StoredBlock[] = [];
      tokenCounts = [];
      for (let i = 0; i < raw.length; i++) blocks.push(decodeBlock(raw[i]!, `${path}.data.blocks[${i}]`, tokenCounts, i));
      data = {
        type,
        parentHash: d.parentHash === null || d.parentHash === undefined ? null : hashIn(d.parentHash, path, '.data.parentHash'),
        blocks,
      };
      break;
    }
    case 'removed':
      data = { type, blockHashes: arr(d.blockHashes, path, '.data.blockHashes').map((h, i) => hashIn(h, path, '.data.blockHashes', i)) };
      break;
    case 'updated':
      data = { type, blockHash: hashIn(d.blockHash, path, '.data.blockHash'), cacheLevel: diff(d.cacheLevel, path, '.data.cacheLevel'), priority: diff(d.priority, path, '.data.priority') };
      break;
    case 'all_cleared':
      data = { type };
      break;
    default:
      throw new DecodeError(`${path}.data.type`, `unknown event type ${type}`);
  }
  return {
    tokenCounts,
    event: {
      eventId: numOrNull(o.eventId, path, '.eventId'),
      data,
      windowSize: numOrNull(o.windowSize, path, '.windowSize'),
      attentionDpRank: numOrNull(o.attentionDpRank, path, '.attentionDpRank'),
      hashAlgo: algoOrNull(o.hashAlgo, path, '.hashAlgo'),
      layerGroupId: numOrNull(o.layerGroupId, path, '.layerGroupId'),
    },
  };
}

const CHECK_FROM_CODE: Record<string, HashCheck> = { m: 'match', x: 'mismatch', u: 'unverifiable' };

function decodeCheck(value: Json | undefined, tokenCounts: number[] | null, path: string): StoredEventCheck | null {
  if (value === null || value === undefined) return null;
  const o = asObject(value, path);
  const codes = str(o.checks, path, '.checks');
  const checks: HashCheck[] = [];
  for (let i = 0; i < codes.length; i++) {
    const check = CHECK_FROM_CODE[codes[i]!];
    if (check === undefined) {
      // the error names the code point, as a character of the string
      const at = [...codes.slice(0, i)].length;
      throw new DecodeError(`${path}.checks[${at}]`, `unknown check code ${String.fromCodePoint(codes.codePointAt(i)!)}`);
    }
    checks.push(check);
  }
  return { checks, tokenCounts: tokenCounts ?? [], alternative: algoOrNull(o.alt, path, '.alt') };
}

function ids(value: Json | undefined, path: string): number[] {
  return arr(value, path).map((v, i) => {
    const n = num(v, `${path}[${i}]`);
    if (!Number.isInteger(n) || n < 0 || n > 0xffff_ffff) throw new DecodeError(`${path}[${i}]`, 'expected a token id');
    return n;
  });
}

function decodeRenderCheck(o: JsonObject, ts: number): RenderCheckObservation {
  const routerIds = str(o.routerIds, '$.routerIds');
  if (routerIds !== 'tokenizer' && routerIds !== 'request') throw new DecodeError('$.routerIds', `expected tokenizer or request, got ${routerIds}`);
  let diff: RenderDiff | null = null;
  if (o.diff !== null && o.diff !== undefined) {
    const d = asObject(o.diff, '$.diff');
    const cause = str(d.cause, '$.diff.cause');
    if (!(RENDER_DRIFT_CAUSES as readonly string[]).includes(cause)) throw new DecodeError('$.diff.cause', `unknown cause ${cause}`);
    const side = strOrNull(d.side, '$.diff.side');
    if (side !== null && side !== 'router' && side !== 'worker') throw new DecodeError('$.diff.side', `expected router, worker or null, got ${side}`);
    diff = {
      position: num(d.position, '$.diff.position'),
      routerLength: num(d.routerLength, '$.diff.routerLength'),
      workerLength: num(d.workerLength, '$.diff.workerLength'),
      commonSuffix: num(d.commonSuffix, '$.diff.commonSuffix'),
      routerSpan: num(d.routerSpan, '$.diff.routerSpan'),
      workerSpan: num(d.workerSpan, '$.diff.workerSpan'),
      windowFrom: num(d.windowFrom, '$.diff.windowFrom'),
      routerWindow: ids(d.routerWindow, '$.diff.routerWindow'),
      workerWindow: ids(d.workerWindow, '$.diff.workerWindow'),
      cause: cause as RenderDriftCause,
      side,
    };
  }
  return { kind: 'render-check', ts, requestId: str(o.requestId, '$.requestId'), server: str(o.server, '$.server'), routerIds, promptTokens: num(o.promptTokens, '$.promptTokens'), diff };
}

function decodeStreamOrigin(value: Json | undefined): StreamOrigin | null {
  if (value === undefined || value === null) return null;
  const o = asObject(value, '$.stream');
  const engine = str(o.engine, '$.stream.engine');
  const hashes = str(o.hashes, '$.stream.hashes');
  if (!isStreamEngine(engine)) throw new DecodeError('$.stream.engine', `unknown stream engine ${engine}`);
  if (hashes !== 'native' && hashes !== 'rekeyed') throw new DecodeError('$.stream.hashes', `unknown stream hashes ${hashes}`);
  if (o.vllmHashing === undefined || o.vllmHashing === null) return { engine, hashes };
  const h = asObject(o.vllmHashing, '$.stream.vllmHashing');
  const algo = strOrNull(h.algo, '$.stream.vllmHashing.algo');
  if (algo !== null && !isVllmHashAlgo(algo)) throw new DecodeError('$.stream.vllmHashing.algo', `unknown vLLM hash algorithm ${algo}`);
  const seedKnown = boolOrNull(h.seedKnown, '$.stream.vllmHashing.seedKnown');
  return { engine, hashes, vllmHashing: { algo, seedKnown: seedKnown ?? false } };
}

function decodeObservation(o: JsonObject, history: KeyHistory): BundleRecord {
  const kind = str(o.kind, '$.kind');
  const ts = num(o.ts, '$.ts');
  switch (kind) {
    case 'worker-events': {
      const raw = arr(o.events, '$.events');
      const events: KvEvent[] = [];
      const tokenCounts: (number[] | null)[] = [];
      for (let i = 0; i < raw.length; i++) {
        const decoded = decodeEvent(raw[i]!, `$.events[${i}]`);
        events.push(decoded.event);
        tokenCounts.push(decoded.tokenCounts);
      }
      const stream = decodeStreamOrigin(o.stream);
      const observation: Observation = { kind, ts, server: str(o.server, '$.server'), firstSeq: num(o.firstSeq, '$.firstSeq'), events, ...(stream !== null ? { stream } : {}) };
      if (o.digest === undefined || o.digest === null) return { observation, digest: null };
      const stored = arr(asObject(o.digest, '$.digest').stored, '$.digest.stored');
      if (stored.length !== events.length) throw new DecodeError('$.digest.stored', 'must have one entry per event');
      const checks: (StoredEventCheck | null)[] = [];
      for (let i = 0; i < stored.length; i++) {
        const c = stored[i];
        checks.push(c === null || c === undefined ? null : decodeCheck(c, tokenCounts[i]!, `$.digest.stored[${i}]`));
      }
      return { observation, digest: { kind: 'worker-events', digest: { stored: checks } } };
    }
    case 'decision': {
      const correlationId = strOrNull(o.correlationId, '$.correlationId');
      const inflight = o.inflight === null || o.inflight === undefined ? null : Object.fromEntries(Object.entries(asObject(o.inflight, '$.inflight')).map(([k, v]) => [k, num(v, `$.inflight.${k}`)]));
      const observation: Observation = {
        kind,
        ts,
        requestId: str(o.requestId, '$.requestId'),
        correlationId,
        server: str(o.server, '$.server'),
        promptTokens: o.promptTokens === null || o.promptTokens === undefined ? null : tokens(o.promptTokens, '$.promptTokens'),
        promptTokenCount: numOrNull(o.promptTokenCount, '$.promptTokenCount'),
        inflight,
        // optional fields appear only when the line has them (a bundle round-trips to the same observation)
        ...(o.promptForm !== undefined ? { promptForm: oneOfOrNull(o.promptForm, PROMPT_FORMS, '$.promptForm') } : {}),
        ...(o.promptTokensFrom !== undefined ? { promptTokensFrom: oneOfOrNull(o.promptTokensFrom, ['request', 'tokenizer'] as const, '$.promptTokensFrom') ?? 'request' } : {}),
        ...(o.unreadable !== undefined ? { unreadable: oneOfOrNull(o.unreadable, REQUEST_UNREADABLE_REASONS, '$.unreadable') } : {}),
      };
      if (o.digest === undefined || o.digest === null) return { observation, digest: null };
      return { observation, digest: { kind: 'decision', keys: decodeKeys(asObject(o.digest, '$.digest').keys, correlationId, history, '$.digest.keys') } };
    }
    case 'stream-sequence': {
      const change = str(o.change, '$.change');
      if (change !== 'subscribed' && change !== 'gap' && change !== 'reset') throw new DecodeError('$.change', `unknown stream change ${change}`);
      return { digest: null, observation: { kind, ts, server: str(o.server, '$.server'), rank: num(o.rank, '$.rank'), change, lost: num(o.lost, '$.lost'), filled: num(o.filled, '$.filled') } };
    }
    case 'router-poll':
      return { digest: null, observation: { kind, ts, server: str(o.server, '$.server'), consumer: str(o.consumer, '$.consumer'), fromSeq: num(o.fromSeq, '$.fromSeq'), toSeq: num(o.toSeq, '$.toSeq'), dropped: num(o.dropped, '$.dropped') } };
    case 'outcome': {
      const observation: Observation = {
        kind,
        ts,
        requestId: str(o.requestId, '$.requestId'),
        server: str(o.server, '$.server'),
        ok: boolOrNull(o.ok, '$.ok') ?? false,
        promptTokens: numOrNull(o.promptTokens, '$.promptTokens'),
        cachedTokens: numOrNull(o.cachedTokens, '$.cachedTokens'),
        latencyMs: numOrNull(o.latencyMs, '$.latencyMs'),
        ...(o.workerPromptTokens !== undefined && o.workerPromptTokens !== null ? { workerPromptTokens: tokens(o.workerPromptTokens, '$.workerPromptTokens') } : {}),
      };
      if (o.digest === undefined || o.digest === null) return { observation, digest: null };
      return { observation, digest: { kind: 'outcome', keys: decodeKeys(asObject(o.digest, '$.digest').keys, null, history, '$.digest.keys') } };
    }
    case 'server-info':
      return { digest: null, observation: { kind, ts, server: str(o.server, '$.server'), hashAlgo: algoOrNull(o.hashAlgo, '$.hashAlgo'), tokensPerBlock: numOrNull(o.tokensPerBlock, '$.tokensPerBlock') } };
    case 'router-config': {
      const source = str(o.source, '$.source');
      if (source !== 'debug-endpoint' && source !== 'orchestrator-log' && source !== 'config' && source !== 'simulator') throw new DecodeError('$.source', `unknown router-config source ${source}`);
      return {
        digest: null,
        observation: {
          kind,
          ts,
          source,
          routerType: strOrNull(o.routerType, '$.routerType'),
          tokensPerBlock: numOrNull(o.tokensPerBlock, '$.tokensPerBlock'),
          maxBatchSize: numOrNull(o.maxBatchSize, '$.maxBatchSize'),
          backfillBlockHashesOnFinish: boolOrNull(o.backfillBlockHashesOnFinish, '$.backfillBlockHashesOnFinish'),
          servers: o.servers === null || o.servers === undefined ? null : arr(o.servers, '$.servers').map((s, i) => str(s, `$.servers[${i}]`)),
          ...(o.profile !== undefined ? { profile: profileOrNull(o.profile, '$.profile') } : {}),
          ...(o.trackRoutedBlocks !== undefined ? { trackRoutedBlocks: boolOrNull(o.trackRoutedBlocks, '$.trackRoutedBlocks') } : {}),
          ...(o.loadWeight !== undefined ? { loadWeight: numOrNull(o.loadWeight, '$.loadWeight') } : {}),
          ...(o.loadCap !== undefined ? { loadCap: numOrNull(o.loadCap, '$.loadCap') } : {}),
        },
      };
    }
    case 'router-server-fact': {
      const server = str(o.server, '$.server');
      const fact = str(o.fact, '$.fact');
      if (fact === 'polling-skipped') {
        return {
          digest: null,
          observation: { kind, ts, server, fact, routerTokensPerBlock: num(o.routerTokensPerBlock, '$.routerTokensPerBlock'), workerTokensPerBlock: num(o.workerTokensPerBlock, '$.workerTokensPerBlock'), divisible: boolOrNull(o.divisible, '$.divisible') ?? true },
        };
      }
      if (fact === 'event-match') {
        return {
          digest: null,
          observation: { kind, ts, server, fact, totalMatch: num(o.totalMatch, '$.totalMatch'), eventMatch: num(o.eventMatch, '$.eventMatch'), eventBlocks: num(o.eventBlocks, '$.eventBlocks'), totalBlocks: num(o.totalBlocks, '$.totalBlocks') },
        };
      }
      throw new DecodeError('$.fact', `unknown router-server-fact ${fact}`);
    }
    case 'router-state':
      return {
        digest: null,
        observation: {
          kind,
          ts,
          server: str(o.server, '$.server'),
          activeRequests: numOrNull(o.activeRequests, '$.activeRequests'),
          hashAlgo: algoOrNull(o.hashAlgo, '$.hashAlgo'),
          blockTableSize: numOrNull(o.blockTableSize, '$.blockTableSize'),
          polls: numOrNull(o.polls, '$.polls'),
          pollFailures: numOrNull(o.pollFailures, '$.pollFailures'),
        },
      };
    case 'router-score':
      return {
        digest: null,
        observation: {
          kind,
          ts,
          seq: num(o.seq, '$.seq'),
          requestId: str(o.requestId, '$.requestId'),
          correlationId: strOrNull(o.correlationId, '$.correlationId'),
          chosen: str(o.chosen, '$.chosen'),
          candidates: arr(o.candidates, '$.candidates').map((c, i) => {
            const co = asObject(c, `$.candidates[${i}]`);
            return {
              server: str(co.server, `$.candidates[${i}].server`),
              matchedTokens: num(co.matchedTokens, `$.candidates[${i}].matchedTokens`),
              activeRequests: num(co.activeRequests, `$.candidates[${i}].activeRequests`),
              score: num(co.score, `$.candidates[${i}].score`),
            };
          }),
        },
      };
    case 'poll-failure':
      return { digest: null, observation: { kind, ts, server: str(o.server, '$.server'), message: str(o.message, '$.message') } };
    case 'render-check':
      return { digest: null, observation: decodeRenderCheck(o, ts) };
    case 'source-health':
      return { digest: null, observation: { kind, ts, source: str(o.source, '$.source'), up: boolOrNull(o.up, '$.up') ?? false, error: strOrNull(o.error, '$.error') } };
    default:
      throw new DecodeError('$.kind', `unknown observation kind ${kind}`);
  }
}

export type DecodeResult = { readonly ok: true; readonly record: BundleRecord } | { readonly ok: false; readonly issue: WireIssue };

/** Parses one line; a bad line is an issue naming the line and the field, never an exception. */
export function decodeBundleRecord(line: string, lineNumber: number, history: KeyHistory): DecodeResult {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch (err) {
    return { ok: false, issue: { code: 'bad-json', message: `line ${lineNumber}: not JSON (${err instanceof Error ? err.message : String(err)})`, path: '$', offset: null } };
  }
  try {
    return { ok: true, record: decodeObservation(asObject(parsed as Json, '$'), history) };
  } catch (err) {
    if (err instanceof DecodeError) {
      return { ok: false, issue: { code: 'bad-record', message: `line ${lineNumber}: ${err.path}: ${err.message}`, path: err.path, offset: null } };
    }
    throw err;
  }
}
