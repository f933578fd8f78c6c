// KV events in a bundle: hashes as strings (exact under plain JSON.parse), token counts instead of tokens unless the
// bundle was recorded with --include-prompts, and each stored event's hash-check results as one code per block.
import { formatWireHash } from '../hashing/block-key.js';
import type { HashCheck, StoredEventCheck } from '../state/hash-verifier.js';
import type { KvEvent, KvEventData, MmKey, StoredBlock } from '../wire/kv-event.js';
import {
  DecodeError,
  algoOrNull,
  arr,
  asObject,
  diff,
  hashIn,
  num,
  numOrNull,
  str,
  strOrNull,
  tokens,
  type Json,
  type JsonObject,
} from './bundle-fields.js';

const NO_TOKENS = new Uint32Array(0);
const NO_MM_KEYS_JSON: Json[] = [];
const CHECK_CODES: Record<HashCheck, string> = { match: 'm', mismatch: 'x', unverifiable: 'u' };

export function encodeEvent(event: KvEvent, includePrompts: boolean): JsonObject {
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
      if (data.cacheLevel !== undefined && data.cacheLevel !== null) d.cacheLevel = data.cacheLevel;
      break;
    case 'updated':
      d = {
        type: 'updated',
        blockHash: formatWireHash(data.blockHash),
        cacheLevel:
          data.cacheLevel === null ? null : { newValue: data.cacheLevel.newValue, oldValue: data.cacheLevel.oldValue },
        priority:
          data.priority === null ? null : { newValue: data.priority.newValue, oldValue: data.priority.oldValue },
      };
      break;
    case 'all_cleared':
      d = { type: 'all_cleared' };
      if (data.cacheLevel !== undefined && data.cacheLevel !== null) d.cacheLevel = data.cacheLevel;
      break;
  }
  const out: JsonObject = {
    eventId: event.eventId,
    windowSize: event.windowSize,
    attentionDpRank: event.attentionDpRank,
    hashAlgo: event.hashAlgo,
    layerGroupId: event.layerGroupId,
    data: d,
  };
  if (event.residency !== undefined) out.residency = { hitLevel: event.residency.hitLevel };
  return out;
}

export function encodeCheck(check: StoredEventCheck | null): Json {
  if (check === null) return null;
  return { checks: check.checks.map((c) => CHECK_CODES[c]).join(''), alt: check.alternative };
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
            return {
              hash: str(mo.hash, `${path}.mmKeys[${i}].hash`),
              startOffset: num(mo.startOffset, `${path}.mmKeys[${i}].startOffset`),
            };
          }),
    cacheSalt: strOrNull(o.cacheSalt, path, '.cacheSalt'),
    loraId: loraId === null ? null : BigInt(loraId),
  };
}

export function decodeEvent(value: Json, path: string): { event: KvEvent; tokenCounts: number[] | null } {
  const o = asObject(value, path);
  const d = asObject(o.data, path, '.data');
  const type = str(d.type, path, '.data.type');
  let data: KvEventData;
  let tokenCounts: number[] | null = null;
  switch (type) {
    case 'created':
      data = {
        type,
        numBlocksPerCacheLevel: arr(d.numBlocksPerCacheLevel, path, '.data.numBlocksPerCacheLevel').map((v, i) =>
          num(v, `${path}.data.numBlocksPerCacheLevel[${i}]`),
        ),
      };
      break;
    case 'stored': {
      const raw = arr(d.blocks, path, '.data.blocks');
      const blocks: StoredBlock[] = [];
      tokenCounts = [];
      for (let i = 0; i < raw.length; i++)
        blocks.push(decodeBlock(raw[i]!, `${path}.data.blocks[${i}]`, tokenCounts, i));
      data = {
        type,
        parentHash:
          d.parentHash === null || d.parentHash === undefined ? null : hashIn(d.parentHash, path, '.data.parentHash'),
        blocks,
      };
      break;
    }
    case 'removed':
      data = {
        type,
        blockHashes: arr(d.blockHashes, path, '.data.blockHashes').map((h, i) =>
          hashIn(h, path, '.data.blockHashes', i),
        ),
        ...(d.cacheLevel !== undefined ? { cacheLevel: numOrNull(d.cacheLevel, path, '.data.cacheLevel') } : {}),
      };
      break;
    case 'updated':
      data = {
        type,
        blockHash: hashIn(d.blockHash, path, '.data.blockHash'),
        cacheLevel: diff(d.cacheLevel, path, '.data.cacheLevel'),
        priority: diff(d.priority, path, '.data.priority'),
      };
      break;
    case 'all_cleared':
      data =
        d.cacheLevel !== undefined ? { type, cacheLevel: numOrNull(d.cacheLevel, path, '.data.cacheLevel') } : { type };
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
      ...(o.residency !== undefined && o.residency !== null
        ? {
            residency: {
              hitLevel: num(asObject(o.residency, `${path}.residency`).hitLevel, path, '.residency.hitLevel'),
            },
          }
        : {}),
    },
  };
}

const CHECK_FROM_CODE: Record<string, HashCheck> = { m: 'match', x: 'mismatch', u: 'unverifiable' };

export function decodeCheck(
  value: Json | undefined,
  tokenCounts: number[] | null,
  path: string,
): StoredEventCheck | null {
  if (value === null || value === undefined) return null;
  const o = asObject(value, path);
  const codes = str(o.checks, path, '.checks');
  const checks: HashCheck[] = [];
  for (let i = 0; i < codes.length; i++) {
    const check = CHECK_FROM_CODE[codes[i]!];
    if (check === undefined) {
      // the error names the code point, as a character of the string
      const at = [...codes.slice(0, i)].length;
      throw new DecodeError(
        `${path}.checks[${at}]`,
        `unknown check code ${String.fromCodePoint(codes.codePointAt(i)!)}`,
      );
    }
    checks.push(check);
  }
  return { checks, tokenCounts: tokenCounts ?? [], alternative: algoOrNull(o.alt, path, '.alt') };
}
