// Nested objects of a `/kv_cache_events` item: stored blocks (a fast path for TensorRT-LLM's exact compact spelling,
// then the general one), their mm_keys, and the event_diff of updated events.
import type { EventDiff, MmKey, StoredBlock, WireBlockHash } from './kv-event.js';
import { skipValue } from './json-scan.js';
import {
  cursor,
  duplicate,
  eachElement,
  expectTag,
  isNull,
  missing,
  nextMember,
  openObject,
  parseCount,
  parseHash,
  parseNullableCount,
  parseNullableString,
  parseString,
  readKey,
  wrongType,
} from './kv-event-scan.js';
import { copyTokenExtraIds, copyTokens, parseTokens } from './kv-event-tokens.js';

function parseMmKey(text: string, i: number): MmKey {
  let j = openObject(text, i, 'mm_keys item');
  let seen = 0;
  let hash: string | null = null;
  let startOffset = -1;
  while (j >= 0) {
    const key = readKey(text, j);
    const v = cursor.pos;
    switch (key) {
      case 'type':
        if (seen & 1) duplicate(key, j);
        seen |= 1;
        expectTag(text, v, 'mm_key', 'mm_keys item');
        break;
      case 'hash':
        if (seen & 2) duplicate(key, j);
        seen |= 2;
        hash = parseString(text, v, 'mm_key hash');
        break;
      case 'start_offset':
        if (seen & 4) duplicate(key, j);
        seen |= 4;
        startOffset = parseCount(text, v, 'start_offset');
        break;
      default:
        cursor.pos = skipValue(text, v);
    }
    j = nextMember(text, cursor.pos);
  }
  const end = cursor.pos;
  if (hash === null) missing(i, 'hash', 'mm_keys item');
  if (startOffset < 0) missing(i, 'start_offset', 'mm_keys item');
  cursor.pos = end;
  return { hash, startOffset };
}

const BLOCK_PREFIX = '{"type":"stored_block","block_hash":';
const BLOCK_TOKENS_KEY = ',"tokens":';
const BLOCK_LEVEL_KEY = ',"cache_level":';
const BLOCK_PRIORITY_KEY = ',"priority":';
const BLOCK_MM_KEY = ',"mm_keys":';
const BLOCK_SALT_KEY = ',"cache_salt":';

/** TensorRT-LLM's exact compact spelling of a stored block (old and new builds); null → take the general path. */
function parseStoredBlockFast(text: string, i: number): StoredBlock | null {
  if (!text.startsWith(BLOCK_PREFIX, i)) return null;
  const blockHash = parseHash(text, i + BLOCK_PREFIX.length, 'block_hash');
  if (!text.startsWith(BLOCK_TOKENS_KEY, cursor.pos)) return null;
  parseTokens(text, cursor.pos + BLOCK_TOKENS_KEY.length);
  const tokens = copyTokens();
  const tokenExtraIds = copyTokenExtraIds();
  if (!text.startsWith(BLOCK_LEVEL_KEY, cursor.pos)) return null;
  const cacheLevel = parseCount(text, cursor.pos + BLOCK_LEVEL_KEY.length, 'cache_level');
  if (!text.startsWith(BLOCK_PRIORITY_KEY, cursor.pos)) return null;
  const priority = parseNullableCount(text, cursor.pos + BLOCK_PRIORITY_KEY.length, 'priority');
  let mmKeys: MmKey[] = [];
  let cacheSalt: string | null = null;
  if (text.startsWith(BLOCK_MM_KEY, cursor.pos)) {
    const start = cursor.pos + BLOCK_MM_KEY.length;
    if (text.charCodeAt(start) === 91 && text.charCodeAt(start + 1) === 93) {
      cursor.pos = start + 2;
    } else {
      const keys: MmKey[] = [];
      eachElement(text, start, 'mm_keys', (at) => keys.push(parseMmKey(text, at)));
      mmKeys = keys;
    }
    if (text.startsWith(BLOCK_SALT_KEY, cursor.pos))
      cacheSalt = parseNullableString(text, cursor.pos + BLOCK_SALT_KEY.length, 'cache_salt');
  }
  if (text.charCodeAt(cursor.pos) !== 125) return null;
  cursor.pos++;
  return { blockHash, tokens, tokenExtraIds, cacheLevel, priority, mmKeys, cacheSalt, loraId: null };
}

export function parseStoredBlock(text: string, i: number): StoredBlock {
  const fast = parseStoredBlockFast(text, i);
  if (fast !== null) return fast;
  let j = openObject(text, i, 'stored block');
  let seen = 0;
  let blockHash: WireBlockHash | null = null;
  let tokens: Uint32Array | null = null;
  let tokenExtraIds: Uint32Array | null = null;
  let cacheLevel = -1;
  let priority: number | null = null;
  let mmKeys: MmKey[] = [];
  let cacheSalt: string | null = null;
  let loraId: bigint | null = null;
  while (j >= 0) {
    const key = readKey(text, j);
    const v = cursor.pos;
    let bit = 0;
    switch (key) {
      case 'type':
        bit = 1;
        expectTag(text, v, 'stored_block', 'stored block');
        break;
      case 'block_hash':
        bit = 2;
        blockHash = parseHash(text, v, 'block_hash');
        break;
      case 'tokens':
        bit = 4;
        parseTokens(text, v);
        tokens = copyTokens();
        tokenExtraIds = copyTokenExtraIds();
        break;
      case 'cache_level':
        bit = 8;
        cacheLevel = parseCount(text, v, 'cache_level');
        break;
      case 'priority':
        bit = 16;
        priority = parseNullableCount(text, v, 'priority');
        break;
      case 'mm_keys': {
        bit = 32;
        const keys: MmKey[] = [];
        eachElement(text, v, 'mm_keys', (start) => keys.push(parseMmKey(text, start)));
        mmKeys = keys;
        break;
      }
      case 'cache_salt':
        bit = 64;
        cacheSalt = parseNullableString(text, v, 'cache_salt');
        break;
      case 'lora_id': {
        bit = 128;
        if (isNull(text, v)) {
          cursor.pos = v + 4;
          loraId = null;
        } else if (text.charCodeAt(v) === 34) {
          wrongType(text, v, 'lora_id', 'an unsigned integer');
        } else {
          loraId = parseHash(text, v, 'lora_id') as bigint;
        }
        break;
      }
      default:
        cursor.pos = skipValue(text, v);
    }
    if (seen & bit) duplicate(key, j);
    seen |= bit;
    j = nextMember(text, cursor.pos);
  }
  const end = cursor.pos;
  if (blockHash === null) missing(i, 'block_hash', 'stored block');
  if (tokens === null) missing(i, 'tokens', 'stored block');
  if (cacheLevel < 0) missing(i, 'cache_level', 'stored block');
  if (!(seen & 16)) missing(i, 'priority', 'stored block');
  cursor.pos = end;
  return { blockHash, tokens, tokenExtraIds, cacheLevel, priority, mmKeys, cacheSalt, loraId };
}

export function parseDiff(text: string, i: number, what: string): EventDiff | null {
  if (isNull(text, i)) {
    cursor.pos = i + 4;
    return null;
  }
  let j = openObject(text, i, what);
  let seen = 0;
  let newValue: number | null = null;
  let oldValue: number | null = null;
  while (j >= 0) {
    const key = readKey(text, j);
    const v = cursor.pos;
    let bit = 0;
    switch (key) {
      case 'type':
        bit = 1;
        expectTag(text, v, 'event_diff', what);
        break;
      case 'new_value':
        bit = 2;
        newValue = parseNullableCount(text, v, `${what} new_value`);
        break;
      case 'old_value':
        bit = 4;
        oldValue = parseNullableCount(text, v, `${what} old_value`);
        break;
      default:
        cursor.pos = skipValue(text, v);
    }
    if (seen & bit) duplicate(key, j);
    seen |= bit;
    j = nextMember(text, cursor.pos);
  }
  const end = cursor.pos;
  if (!(seen & 2)) missing(i, 'new_value', what);
  if (!(seen & 4)) missing(i, 'old_value', what);
  cursor.pos = end;
  return { newValue, oldValue };
}
