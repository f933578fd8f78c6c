// Nested objects of a `/kv_cache_events` item: stored blocks (a fast path for TensorRT-LLM's exact compact spelling,
// then the general one), their mm_keys, and the event_diff of updated events.
import type { EventDiff, MmKey, StoredBlock, WireBlockHash } from './kv-event.js';
import { StringTable, asciiBytes } from './string-table.js';
import {
  duplicate,
  eachMember,
  expectTag,
  missing,
  openArray,
  openObject,
  parseCount,
  parseHash,
  parseNullableCount,
  parseNullableString,
  parseString,
  wrongType,
  type KvEventScanner,
} from './kv-event-scan.js';
import { parseTokens } from './kv-event-tokens.js';

const MM_KEY_KEYS = new StringTable(['type', 'hash', 'start_offset']);
const MM_KEY_TAG = new StringTable(['mm_key']);
const BLOCK_KEYS = new StringTable([
  'type',
  'block_hash',
  'tokens',
  'cache_level',
  'priority',
  'mm_keys',
  'cache_salt',
  'lora_id',
]);
const [B_TYPE, B_HASH, B_TOKENS, B_LEVEL, B_PRIORITY, B_MM_KEYS, B_SALT, B_LORA] = [0, 1, 2, 3, 4, 5, 6, 7] as const;
const STORED_BLOCK_TAG = new StringTable(['stored_block']);
const DIFF_KEYS = new StringTable(['type', 'new_value', 'old_value']);
const EVENT_DIFF_TAG = new StringTable(['event_diff']);

const NO_MM_KEYS: readonly MmKey[] = Object.freeze([]);

/** Calls `item` for each element of the array at `i` (item leaves pos after the element); pos after the array. */
export function eachElement(s: KvEventScanner, i: number, what: string, item: (start: number) => void): void {
  for (let j = openArray(s, i, what); j >= 0; j = s.nextElement(s.pos)) item(j);
}

function parseMmKey(s: KvEventScanner, i: number): MmKey {
  let hash: string | null = null;
  let startOffset = -1;
  eachMember(s, i, 'mm_keys item', MM_KEY_KEYS, (key, v) => {
    if (key === 0) expectTag(s, v, MM_KEY_TAG, 'mm_keys item');
    else if (key === 1) hash = parseString(s, v, 'mm_key hash');
    else startOffset = parseCount(s, v, 'start_offset');
  });
  const end = s.pos;
  if (hash === null) missing(i, 'hash', 'mm_keys item');
  if (startOffset < 0) missing(i, 'start_offset', 'mm_keys item');
  s.pos = end;
  return { hash, startOffset };
}

function parseMmKeys(s: KvEventScanner, i: number): readonly MmKey[] {
  const b = s.bytes;
  if (b[i] === 91 && b[i + 1] === 93) {
    s.pos = i + 2;
    return NO_MM_KEYS;
  }
  const keys: MmKey[] = [];
  eachElement(s, i, 'mm_keys', (at) => keys.push(parseMmKey(s, at)));
  return keys;
}

const BLOCK_PREFIX = asciiBytes('{"type":"stored_block","block_hash":');
const BLOCK_TOKENS_KEY = asciiBytes(',"tokens":');
const BLOCK_LEVEL_KEY = asciiBytes(',"cache_level":');
const BLOCK_PRIORITY_KEY = asciiBytes(',"priority":');
const BLOCK_MM_KEY = asciiBytes(',"mm_keys":');
const BLOCK_SALT_KEY = asciiBytes(',"cache_salt":');

/** TensorRT-LLM's exact compact spelling of a stored block (old and new builds); null → take the general path. */
function parseStoredBlockFast(s: KvEventScanner, i: number): StoredBlock | null {
  if (!s.startsWith(i, BLOCK_PREFIX)) return null;
  const blockHash = parseHash(s, i + BLOCK_PREFIX.length, 'block_hash');
  if (!s.startsWith(s.pos, BLOCK_TOKENS_KEY)) return null;
  const tokens = parseTokens(s, s.pos + BLOCK_TOKENS_KEY.length);
  if (!s.startsWith(s.pos, BLOCK_LEVEL_KEY)) return null;
  const cacheLevel = parseCount(s, s.pos + BLOCK_LEVEL_KEY.length, 'cache_level');
  if (!s.startsWith(s.pos, BLOCK_PRIORITY_KEY)) return null;
  const priority = parseNullableCount(s, s.pos + BLOCK_PRIORITY_KEY.length, 'priority');
  let mmKeys = NO_MM_KEYS;
  let cacheSalt: string | null = null;
  if (s.startsWith(s.pos, BLOCK_MM_KEY)) {
    mmKeys = parseMmKeys(s, s.pos + BLOCK_MM_KEY.length);
    if (s.startsWith(s.pos, BLOCK_SALT_KEY))
      cacheSalt = parseNullableString(s, s.pos + BLOCK_SALT_KEY.length, 'cache_salt');
  }
  if (s.bytes[s.pos] !== 125) return null;
  s.pos++;
  return {
    blockHash,
    tokens: tokens.ids,
    tokenExtraIds: tokens.extraIds,
    cacheLevel,
    priority,
    mmKeys,
    cacheSalt,
    loraId: null,
  };
}

function parseLoraId(s: KvEventScanner, v: number): bigint | null {
  if (s.isNull(v)) {
    s.pos = v + 4;
    return null;
  }
  if (s.bytes[v] === 34) wrongType(s, v, 'lora_id', 'an unsigned integer');
  return parseHash(s, v, 'lora_id') as bigint;
}

export function parseStoredBlock(s: KvEventScanner, i: number): StoredBlock {
  const fast = parseStoredBlockFast(s, i);
  if (fast !== null) return fast;
  let j = openObject(s, i, 'stored block');
  let seen = 0;
  let blockHash: WireBlockHash | null = null;
  let tokens: Uint32Array | null = null;
  let tokenExtraIds: Uint32Array | null = null;
  let cacheLevel = -1;
  let priority: number | null = null;
  let mmKeys = NO_MM_KEYS;
  let cacheSalt: string | null = null;
  let loraId: bigint | null = null;
  while (j >= 0) {
    const key = s.keyId(j, BLOCK_KEYS);
    const v = s.pos;
    switch (key) {
      case B_TYPE:
        expectTag(s, v, STORED_BLOCK_TAG, 'stored block');
        break;
      case B_HASH:
        blockHash = parseHash(s, v, 'block_hash');
        break;
      case B_TOKENS: {
        const read = parseTokens(s, v);
        tokens = read.ids;
        tokenExtraIds = read.extraIds;
        break;
      }
      case B_LEVEL:
        cacheLevel = parseCount(s, v, 'cache_level');
        break;
      case B_PRIORITY:
        priority = parseNullableCount(s, v, 'priority');
        break;
      case B_MM_KEYS:
        mmKeys = parseMmKeys(s, v);
        break;
      case B_SALT:
        cacheSalt = parseNullableString(s, v, 'cache_salt');
        break;
      case B_LORA:
        loraId = parseLoraId(s, v);
        break;
      default:
        s.pos = s.skipValue(v);
    }
    const bit = key < 0 ? 0 : 1 << key;
    if (seen & bit) duplicate(s, j);
    seen |= bit;
    j = s.nextMember(s.pos);
  }
  const end = s.pos;
  if (blockHash === null) missing(i, 'block_hash', 'stored block');
  if (tokens === null) missing(i, 'tokens', 'stored block');
  if (cacheLevel < 0) missing(i, 'cache_level', 'stored block');
  if (!(seen & (1 << B_PRIORITY))) missing(i, 'priority', 'stored block');
  s.pos = end;
  return { blockHash, tokens, tokenExtraIds, cacheLevel, priority, mmKeys, cacheSalt, loraId };
}

export function parseDiff(s: KvEventScanner, i: number, what: string): EventDiff | null {
  if (s.isNull(i)) {
    s.pos = i + 4;
    return null;
  }
  let j = openObject(s, i, what);
  let seen = 0;
  let newValue: number | null = null;
  let oldValue: number | null = null;
  while (j >= 0) {
    const key = s.keyId(j, DIFF_KEYS);
    const v = s.pos;
    if (key === 0) expectTag(s, v, EVENT_DIFF_TAG, what);
    else if (key === 1) newValue = parseNullableCount(s, v, `${what} new_value`);
    else if (key === 2) oldValue = parseNullableCount(s, v, `${what} old_value`);
    else s.pos = s.skipValue(v);
    const bit = key < 0 ? 0 : 1 << key;
    if (seen & bit) duplicate(s, j);
    seen |= bit;
    j = s.nextMember(s.pos);
  }
  const end = s.pos;
  if (!(seen & 2)) missing(i, 'new_value', what);
  if (!(seen & 4)) missing(i, 'old_value', what);
  s.pos = end;
  return { newValue, oldValue };
}
