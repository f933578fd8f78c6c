// The daemon's hot path: a `/kv_cache_events` body (docs/trtllm-wire.md §2, §2.1) → domain events, in one pass over the
// string by char code. No generic JSON tree, one BigInt per hash, token ids straight into a Uint32Array.
// Each item keeps its exact source slice (`raw`), so a relay can re-serve `[` + raws.join(',') + `]` byte for byte.
//
// Decisions:
// - Accepts the wrapped `{"event_id",…,"data":{…}}` form and the flat `{"type":"stored",…}` form; `hash_algo` is read
//   from the item, then from `data`.
// - v2_sha256 hashes must be 64 hex digits; upper-case digits are accepted and normalised to lower case (TensorRT-LLM
//   writes lower case; the raw slice keeps the original spelling).
// - A bad item is skipped with one issue (its first problem) and parsing goes on; broken JSON syntax ends the parse
//   (item boundaries after it are unknowable), keeping every item completed before it.
// - Fields older builds do not write are optional (`mm_keys` → [], `cache_salt` → null, `token_extra_id` → 0,
//   `parent_hash` → null, updated diffs → null, type tags of nested objects); fields every build writes are required.
// - Unknown keys are skipped (newer builds add fields); a repeated known key is an issue ('duplicate-key').
// - A hash's form (decimal u64 or hex string) is taken as written; whether it matches the event's hash_algo is left
//   to the consumer. token_extra_id is held as uint32 (C++ declares it 64-bit; larger values are reported).
// - Strings are strict JSON plus UTF-8 sanity: raw control characters and unpaired surrogates are rejected.
import type { EventDiff, HashAlgo, KvEvent, KvEventData, MmKey, StoredBlock, WireBlockHash } from './kv-event.js';
import { isHashAlgo } from './kv-event.js';
import type { WireIssue } from './wire-issue.js';
import type { WireIssueCode } from './wire-issue-codes.js';
import { decimalFitsU64 } from './u64-decimal.js';
import {
  ScanFailure,
  decodeString,
  excerpt,
  nextElement,
  nextMember as nextMemberAt,
  readMemberKey,
  walkEnd,
  failValue,
  internalIssue,
  numberShape,
  pathAt,
  scanNumber,
  scanString,
  skipValue,
  skipWs,
  stringHadEscape,
  toIssue,
  truncated,
  unexpected,
} from './json-scan.js';

export interface ParsedKvEvent {
  readonly event: KvEvent;
  /**
   * exact source text of the array item. V8 keeps it as a slice of the input, so holding any `raw` keeps the
   * whole body alive: a long-lived buffer of raws should copy them (e.g. through a Buffer) or drop the body soon.
   */
  readonly raw: string;
  /** position of the item in the array */
  readonly index: number;
  /** offset of `raw` in the input */
  readonly offset: number;
}

export interface KvEventsParse {
  readonly events: ParsedKvEvent[];
  readonly issues: WireIssue[];
}

const TWO_32 = 0x1_0000_0000;
// one u64 read through two u32 halves, in platform byte order
const u64View = new BigUint64Array(1);
const u64Halves = new Uint32Array(u64View.buffer);
const LITTLE_ENDIAN = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1;
const U64_LO = LITTLE_ENDIAN ? 0 : 1;
const U64_HI = LITTLE_ENDIAN ? 1 : 0;
const MAX_U32 = 0xffff_ffff;
const TOKEN_PREFIX = '{"type":"unique_token","token_id":';
const TOKEN_EXTRA_KEY = ',"token_extra_id":';
const TOKEN_PREFIX_LENGTH = TOKEN_PREFIX.length;
const TOKEN_BETWEEN = `${TOKEN_EXTRA_KEY}0},${TOKEN_PREFIX}`;
const TOKEN_BETWEEN_LENGTH = TOKEN_BETWEEN.length;
const TOKEN_EXTRA_KEY_LENGTH = TOKEN_EXTRA_KEY.length;
const TOKEN_TAIL_LENGTH = `${TOKEN_EXTRA_KEY}0}`.length;
/** a run of compact tokens with extra id 0, each followed by ',' before the next token or by ']' (not consumed) */
const COMPACT_TOKEN_RUN = /(?:\{"type":"unique_token","token_id":(?:0|[1-9][0-9]{0,9}),"token_extra_id":0\}(?:,(?=\{)|(?=\])))*/y;

// Position after the last value parsed by a parse* function (saves returning pairs on the hot path).
let pos = 0;

// Token scratch reused across blocks; each block copies out exactly its tokens.
let tokenScratch = new Uint32Array(1024);
let extraScratch = new Uint32Array(1024);
let tokenCount = 0;
let anyExtra = false;
// Values of the last token object parsed by the general (non-fast) path.
let slowTokenId = 0;
let slowExtraId = 0;

function describe(text: string, i: number): string {
  const c = text.charCodeAt(i);
  if (c === 34) return 'a string';
  if (c === 123) return 'an object';
  if (c === 91) return 'an array';
  if (c === 116 || c === 102) return 'a boolean';
  if (c === 110) return 'null';
  if (c === 45 || (c >= 48 && c <= 57)) return 'a number';
  return excerpt(text, i);
}

function wrongType(text: string, i: number, what: string, expected: string): never {
  if (i >= text.length) return truncated(text);
  skipValue(text, i); // broken syntax outranks a wrong type
  return failValue('wrong-type', `${what} must be ${expected}, found ${describe(text, i)} at offset ${i}`, i);
}

function isNull(text: string, i: number): boolean {
  return text.charCodeAt(i) === 110 && text.startsWith('null', i);
}

// ---------------------------------------------------------------- scalars

function parseHash(text: string, i: number, what: string): WireBlockHash {
  const c = text.charCodeAt(i);
  if (c === 34) {
    const end = scanString(text, i);
    const value = decodeString(text, i, end, stringHadEscape);
    let upper = false;
    let hex = value.length === 64;
    for (let k = 0; hex && k < 64; k++) {
      const h = value.charCodeAt(k);
      if (h >= 65 && h <= 70) upper = true;
      else if (!((h >= 48 && h <= 57) || (h >= 97 && h <= 102))) hex = false;
    }
    if (!hex) {
      return failValue(
        'invalid-hash-string',
        `${what} string must be 64 hex digits (a v2_sha256 key), found ${excerpt(text, i)} at offset ${i}`,
        i,
      );
    }
    pos = end;
    return upper ? value.toLowerCase() : value;
  }
  if (c >= 48 && c <= 57) {
    // fast path: accumulate the value as two exact uint32 halves (no string slice, one BigInt); anything unusual
    // (fraction, exponent, leading zero, > 20 digits, > 2^64-1) falls through to the checked path below
    // up to 15 digits in one exact double, then the rest digit by digit with a carry into the high half
    let v = 0;
    let k = i;
    const head = Math.min(text.length, i + 15);
    for (; k < head; k++) {
      const d = text.charCodeAt(k) - 48;
      if (d < 0 || d > 9) break;
      v = v * 10 + d;
    }
    let hi = Math.floor(v / TWO_32);
    let lo = v - hi * TWO_32;
    if (k === head) {
      const limit = Math.min(text.length, i + 21);
      for (; k < limit; k++) {
        const d = text.charCodeAt(k) - 48;
        if (d < 0 || d > 9) break;
        const next = lo * 10 + d;
        const carry = Math.floor(next / TWO_32);
        lo = next - carry * TWO_32;
        hi = hi * 10 + carry;
      }
    }
    const after = text.charCodeAt(k) | 32; // '.' → 46, 'e'/'E' → 101
    if (k - i <= 20 && hi <= MAX_U32 && after !== 46 && after !== 101 && (c !== 48 || k === i + 1)) {
      pos = k;
      if (hi === 0) return BigInt(lo);
      u64Halves[U64_LO] = lo;
      u64Halves[U64_HI] = hi;
      return u64View[0] ?? 0n;
    }
  }
  if (c === 45 || (c >= 48 && c <= 57)) {
    const end = scanNumber(text, i);
    if (numberShape.negative) {
      return failValue('hash-negative', `${what} ${text.slice(i, end)} at offset ${i} is negative; hashes are unsigned 64-bit`, i);
    }
    if (numberShape.exponent) {
      return failValue('hash-exponent', `${what} ${text.slice(i, end)} at offset ${i} is in exponent form; an exact hash is an integer`, i);
    }
    if (numberShape.fraction) {
      return failValue('hash-float', `${what} ${text.slice(i, end)} at offset ${i} has a fraction; an exact hash is an integer`, i);
    }
    const len = end - i;
    if (!decimalFitsU64(text, i, end)) {
      return failValue('hash-out-of-range', `${what} ${text.slice(i, end)} at offset ${i} exceeds 2^64-1`, i);
    }
    pos = end;
    if (len <= 15) {
      let v = 0;
      for (let k = i; k < end; k++) v = v * 10 + text.charCodeAt(k) - 48;
      return BigInt(v);
    }
    return BigInt(text.slice(i, end));
  }
  return wrongType(text, i, what, 'an unsigned integer or a 64-hex string');
}

function parseNullableHash(text: string, i: number, what: string): WireBlockHash | null {
  if (isNull(text, i)) {
    pos = i + 4;
    return null;
  }
  return parseHash(text, i, what);
}

/** Unsigned integer ≤ max (a JS number). */
function parseUint(text: string, i: number, what: string, max: number, rangeCode: WireIssueCode): number {
  const c = text.charCodeAt(i);
  if (c === 45 || (c >= 48 && c <= 57)) {
    const end = scanNumber(text, i);
    if (numberShape.fraction || numberShape.exponent) {
      return failValue('not-an-integer', `${what} ${text.slice(i, end)} at offset ${i} is not an integer`, i);
    }
    if (numberShape.negative) {
      return failValue(rangeCode, `${what} ${text.slice(i, end)} at offset ${i} is negative`, i);
    }
    // ≤ 15 digits accumulate exactly; longer ones convert exactly up to 2^53-1 and round to ≥ 2^53 beyond it
    let v = 0;
    if (end - i <= 15) for (let k = i; k < end; k++) v = v * 10 + text.charCodeAt(k) - 48;
    else v = Number(text.slice(i, end));
    if (v > max) return failValue(rangeCode, `${what} ${text.slice(i, end)} at offset ${i} exceeds ${max}`, i);
    pos = end;
    return v;
  }
  return wrongType(text, i, what, 'an unsigned integer');
}

function parseCount(text: string, i: number, what: string): number {
  return parseUint(text, i, what, Number.MAX_SAFE_INTEGER, 'number-out-of-range');
}

function parseNullableCount(text: string, i: number, what: string): number | null {
  if (isNull(text, i)) {
    pos = i + 4;
    return null;
  }
  return parseCount(text, i, what);
}

function parseString(text: string, i: number, what: string): string {
  if (text.charCodeAt(i) !== 34) return wrongType(text, i, what, 'a string');
  const end = scanString(text, i);
  pos = end;
  return decodeString(text, i, end, stringHadEscape);
}

function parseNullableString(text: string, i: number, what: string): string | null {
  if (isNull(text, i)) {
    pos = i + 4;
    return null;
  }
  return parseString(text, i, what);
}

function parseHashAlgo(text: string, i: number): HashAlgo | null {
  const value = parseNullableString(text, i, 'hash_algo');
  if (value === null || isHashAlgo(value)) return value;
  return failValue('unknown-hash-algo', `hash_algo ${JSON.stringify(value)} at offset ${i} is not a known algorithm`, i);
}

function expectTag(text: string, i: number, expected: string, what: string): void {
  const value = parseString(text, i, `${what} type`);
  if (value !== expected) {
    failValue('wrong-type-tag', `${what} has type ${JSON.stringify(value)} at offset ${i}, expected "${expected}"`, i);
  }
}

// ---------------------------------------------------------------- object walking

/** Reads the key at `j` (a quote expected); leaves pos at the value start. */
function readKey(text: string, j: number): string {
  const key = readMemberKey(text, j);
  pos = walkEnd;
  return key;
}

/** After a member value ending at `j`: returns the next key offset, or -1 after the closing brace (pos = after it). */
function nextMember(text: string, j: number): number {
  const k = nextMemberAt(text, j);
  if (k < 0) pos = walkEnd;
  return k;
}

/** Offset of the first key of the object at `i`, or -1 when it is empty (pos = after it). */
function openObject(text: string, i: number, what: string): number {
  if (text.charCodeAt(i) !== 123) return wrongType(text, i, what, 'an object');
  const j = skipWs(text, i + 1);
  if (text.charCodeAt(j) === 125) {
    pos = j + 1;
    return -1;
  }
  return j;
}

function duplicate(key: string, keyStart: number): never {
  return failValue('duplicate-key', `key "${key}" appears twice in one object (second at offset ${keyStart})`, keyStart);
}

function missing(objectStart: number, field: string, what: string): never {
  return failValue('missing-field', `${what} at offset ${objectStart} has no "${field}"`, objectStart, field);
}

// ---------------------------------------------------------------- tokens

function growScratch(): void {
  const tokens = new Uint32Array(tokenScratch.length * 2);
  tokens.set(tokenScratch);
  tokenScratch = tokens;
  const extras = new Uint32Array(extraScratch.length * 2);
  extras.set(extraScratch);
  extraScratch = extras;
}

/** General path for one token object (any key order, whitespace, missing type tag). */
function parseTokenObject(text: string, i: number): void {
  let j = openObject(text, i, 'token');
  let seen = 0;
  let id = -1;
  let extra = 0;
  while (j >= 0) {
    const key = readKey(text, j);
    const v = pos;
    switch (key) {
      case 'type':
        if (seen & 1) duplicate(key, j);
        seen |= 1;
        expectTag(text, v, 'unique_token', 'token');
        break;
      case 'token_id':
        if (seen & 2) duplicate(key, j);
        seen |= 2;
        id = parseUint(text, v, 'token_id', MAX_U32, 'token-id-out-of-range');
        break;
      case 'token_extra_id':
        if (seen & 4) duplicate(key, j);
        seen |= 4;
        extra = parseUint(text, v, 'token_extra_id', MAX_U32, 'token-id-out-of-range');
        break;
      default:
        pos = skipValue(text, v);
    }
    j = nextMember(text, pos);
  }
  const end = pos;
  if (id < 0) missing(i, 'token_id', 'token');
  slowTokenId = id;
  slowExtraId = extra;
  pos = end;
}

/** Parses a `tokens` array into the scratch (tokenCount, anyExtra); pos after it. */
function parseTokens(text: string, i: number): void {
  if (text.charCodeAt(i) !== 91) wrongType(text, i, 'tokens', 'an array');
  let count = 0;
  let extras = false;
  let j = skipWs(text, i + 1);
  if (text.charCodeAt(j) === 93) {
    tokenCount = 0;
    anyExtra = false;
    pos = j + 1;
    return;
  }
  let ids = tokenScratch;
  let xs = extraScratch;
  // Bulk path: one sticky regular expression (native code) checks a whole run of tokens in TensorRT-LLM's compact
  // spelling with extra id 0, then the ids are read from the layout it proved. It stops at a token boundary: after a
  // token followed by ']', or after the comma before a token it does not take. From there the loop below goes on
  // token by token, so anything unusual (and every issue, with its code and offset) is handled exactly as before.
  COMPACT_TOKEN_RUN.lastIndex = j;
  COMPACT_TOKEN_RUN.test(text); // matches at least the empty run
  const runEnd = COMPACT_TOKEN_RUN.lastIndex;
  let k = j;
  while (k < runEnd) {
    const tokenStart = k;
    k += TOKEN_PREFIX_LENGTH;
    let id = text.charCodeAt(k++) - 48;
    for (let d = text.charCodeAt(k) - 48; d >= 0 && d <= 9; d = text.charCodeAt(++k) - 48) id = id * 10 + d;
    if (id > MAX_U32) {
      k = tokenStart; // the loop below reports it
      break;
    }
    if (count === ids.length) {
      growScratch();
      ids = tokenScratch;
      xs = extraScratch;
    }
    ids[count] = id;
    xs[count] = 0;
    count++;
    k += TOKEN_TAIL_LENGTH;
    if (k < runEnd) k++; // the comma before the next token
  }
  j = k;
  if (k === runEnd && text.charCodeAt(j) === 93) {
    tokenCount = count;
    anyExtra = false;
    pos = j + 1;
    return;
  }
  let primed = false;
  for (;;) {
    if (count === ids.length) {
      growScratch();
      ids = tokenScratch;
      xs = extraScratch;
    }
    let id = -1;
    let extra = 0;
    // fast path: TensorRT-LLM's exact compact spelling, digits read inline; anything else goes the general way,
    // which also produces the precise issue (leading zeros, fractions, > 2^32-1 all fail the checks below).
    // `primed`: the previous token's check already matched this token's prefix.
    if (primed || (text.charCodeAt(j) === 123 && text.slice(j, j + TOKEN_PREFIX_LENGTH) === TOKEN_PREFIX)) {
      primed = false;
      let k = j + TOKEN_PREFIX_LENGTH;
      let d = text.charCodeAt(k) - 48;
      let a = -1;
      if (d === 0) {
        a = 0;
        k++;
      } else if (d > 0 && d <= 9) {
        a = d;
        const limit = ++k + 9;
        for (; k < limit; k++) {
          d = text.charCodeAt(k) - 48;
          if (d < 0 || d > 9) break;
          a = a * 10 + d;
        }
      }
      if (a >= 0 && a <= MAX_U32) {
        // the common case in one comparison: extra id 0, then the next token's prefix
        if (text.slice(k, k + TOKEN_BETWEEN_LENGTH) === TOKEN_BETWEEN) {
          ids[count] = a;
          xs[count] = 0;
          count++;
          j = k + TOKEN_BETWEEN_LENGTH - TOKEN_PREFIX_LENGTH;
          primed = true;
          continue;
        }
        if (text.slice(k, k + TOKEN_EXTRA_KEY_LENGTH) === TOKEN_EXTRA_KEY) {
          k += TOKEN_EXTRA_KEY_LENGTH;
          d = text.charCodeAt(k) - 48;
          let b = -1;
          if (d === 0) {
            b = 0;
            k++;
          } else if (d > 0 && d <= 9) {
            b = d;
            const limit = ++k + 9;
            for (; k < limit; k++) {
              d = text.charCodeAt(k) - 48;
              if (d < 0 || d > 9) break;
              b = b * 10 + d;
            }
          }
          if (b >= 0 && b <= MAX_U32 && text.charCodeAt(k) === 125) {
            id = a;
            extra = b;
            j = k + 1;
          }
        }
      }
    }
    if (id < 0) {
      parseTokenObject(text, j);
      id = slowTokenId;
      extra = slowExtraId;
      j = pos;
    }
    ids[count] = id;
    xs[count] = extra;
    if (extra !== 0) extras = true;
    count++;
    let c = text.charCodeAt(j);
    if (c === 44) {
      j++;
      c = text.charCodeAt(j);
      if (c === 32 || c === 10 || c === 13 || c === 9) j = skipWs(text, j);
      continue;
    }
    if (c === 32 || c === 10 || c === 13 || c === 9) {
      j = skipWs(text, j);
      c = text.charCodeAt(j);
      if (c === 44) {
        j = skipWs(text, j + 1);
        continue;
      }
    }
    if (c === 93) {
      tokenCount = count;
      anyExtra = extras;
      pos = j + 1;
      return;
    }
    unexpected(text, j, "',' or ']'");
  }
}

// ---------------------------------------------------------------- nested objects

/** Calls `item` for each element of the array at `i` (item leaves pos after the element); pos after the array. */
function eachElement(text: string, i: number, what: string, item: (start: number) => void): void {
  if (text.charCodeAt(i) !== 91) wrongType(text, i, what, 'an array');
  let j = skipWs(text, i + 1);
  if (text.charCodeAt(j) === 93) {
    pos = j + 1;
    return;
  }
  for (; j >= 0; j = nextElement(text, pos)) item(j);
  pos = walkEnd;
}

function parseMmKey(text: string, i: number): MmKey {
  let j = openObject(text, i, 'mm_keys item');
  let seen = 0;
  let hash: string | null = null;
  let startOffset = -1;
  while (j >= 0) {
    const key = readKey(text, j);
    const v = pos;
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
        pos = skipValue(text, v);
    }
    j = nextMember(text, pos);
  }
  const end = pos;
  if (hash === null) missing(i, 'hash', 'mm_keys item');
  if (startOffset < 0) missing(i, 'start_offset', 'mm_keys item');
  pos = end;
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
  if (!text.startsWith(BLOCK_TOKENS_KEY, pos)) return null;
  parseTokens(text, pos + BLOCK_TOKENS_KEY.length);
  const tokens = tokenScratch.slice(0, tokenCount);
  const tokenExtraIds = anyExtra ? extraScratch.slice(0, tokenCount) : null;
  if (!text.startsWith(BLOCK_LEVEL_KEY, pos)) return null;
  const cacheLevel = parseCount(text, pos + BLOCK_LEVEL_KEY.length, 'cache_level');
  if (!text.startsWith(BLOCK_PRIORITY_KEY, pos)) return null;
  const priority = parseNullableCount(text, pos + BLOCK_PRIORITY_KEY.length, 'priority');
  let mmKeys: MmKey[] = [];
  let cacheSalt: string | null = null;
  if (text.startsWith(BLOCK_MM_KEY, pos)) {
    const start = pos + BLOCK_MM_KEY.length;
    if (text.charCodeAt(start) === 91 && text.charCodeAt(start + 1) === 93) {
      pos = start + 2;
    } else {
      const keys: MmKey[] = [];
      eachElement(text, start, 'mm_keys', (at) => keys.push(parseMmKey(text, at)));
      mmKeys = keys;
    }
    if (text.startsWith(BLOCK_SALT_KEY, pos)) cacheSalt = parseNullableString(text, pos + BLOCK_SALT_KEY.length, 'cache_salt');
  }
  if (text.charCodeAt(pos) !== 125) return null;
  pos++;
  return { blockHash, tokens, tokenExtraIds, cacheLevel, priority, mmKeys, cacheSalt, loraId: null };
}

function parseStoredBlock(text: string, i: number): StoredBlock {
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
    const v = pos;
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
        tokens = tokenScratch.slice(0, tokenCount);
        tokenExtraIds = anyExtra ? extraScratch.slice(0, tokenCount) : null;
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
          pos = v + 4;
          loraId = null;
        } else if (text.charCodeAt(v) === 34) {
          wrongType(text, v, 'lora_id', 'an unsigned integer');
        } else {
          loraId = parseHash(text, v, 'lora_id') as bigint;
        }
        break;
      }
      default:
        pos = skipValue(text, v);
    }
    if (seen & bit) duplicate(key, j);
    seen |= bit;
    j = nextMember(text, pos);
  }
  const end = pos;
  if (blockHash === null) missing(i, 'block_hash', 'stored block');
  if (tokens === null) missing(i, 'tokens', 'stored block');
  if (cacheLevel < 0) missing(i, 'cache_level', 'stored block');
  if (!(seen & 16)) missing(i, 'priority', 'stored block');
  pos = end;
  return { blockHash, tokens, tokenExtraIds, cacheLevel, priority, mmKeys, cacheSalt, loraId };
}

function parseDiff(text: string, i: number, what: string): EventDiff | null {
  if (isNull(text, i)) {
    pos = i + 4;
    return null;
  }
  let j = openObject(text, i, what);
  let seen = 0;
  let newValue: number | null = null;
  let oldValue: number | null = null;
  while (j >= 0) {
    const key = readKey(text, j);
    const v = pos;
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
        pos = skipValue(text, v);
    }
    if (seen & bit) duplicate(key, j);
    seen |= bit;
    j = nextMember(text, pos);
  }
  const end = pos;
  if (!(seen & 2)) missing(i, 'new_value', what);
  if (!(seen & 4)) missing(i, 'old_value', what);
  pos = end;
  return { newValue, oldValue };
}

// ---------------------------------------------------------------- events

/** Fields of an event object; the wrapped form fills one for the item and one for `data`, the flat form one. */
class EventFields {
  seen = 0;
  eventId: number | null = null;
  dataStart = -1;
  data: EventFields | null = null;
  windowSize: number | null = null;
  attentionDpRank: number | null = null;
  hashAlgo: HashAlgo | null = null;
  layerGroupId: number | null = null;
  type: string | null = null;
  typeStart = -1;
  parentHash: WireBlockHash | null = null;
  blocks: StoredBlock[] | null = null;
  blockHashes: WireBlockHash[] | null = null;
  blockHash: WireBlockHash | null = null;
  cacheLevel: EventDiff | null = null;
  priority: EventDiff | null = null;
  numBlocksPerCacheLevel: number[] | null = null;
}

const F_EVENT_ID = 1;
const F_DATA = 2;
const F_WINDOW = 4;
const F_RANK = 8;
const F_ALGO = 16;
const F_GROUP = 32;
const F_TYPE = 64;
const F_PARENT = 128;
const F_BLOCKS = 256;
const F_HASHES = 512;
const F_HASH = 1024;
const F_LEVEL = 2048;
const F_PRIORITY = 4096;
const F_NUM_BLOCKS = 8192;

function parseEventFields(text: string, i: number, top: boolean): EventFields {
  const f = new EventFields();
  let j = openObject(text, i, top ? 'event' : 'data');
  while (j >= 0) {
    const key = readKey(text, j);
    const v = pos;
    let bit = 0;
    switch (key) {
      case 'event_id':
        bit = F_EVENT_ID;
        f.eventId = parseNullableCount(text, v, 'event_id');
        break;
      case 'data':
        if (top) {
          bit = F_DATA;
          f.dataStart = v;
          f.data = parseEventFields(text, v, false);
        } else {
          pos = skipValue(text, v);
        }
        break;
      case 'window_size':
        bit = F_WINDOW;
        f.windowSize = parseNullableCount(text, v, 'window_size');
        break;
      case 'attention_dp_rank':
        bit = F_RANK;
        f.attentionDpRank = parseNullableCount(text, v, 'attention_dp_rank');
        break;
      case 'hash_algo':
        bit = F_ALGO;
        f.hashAlgo = parseHashAlgo(text, v);
        break;
      case 'layer_group_id':
        bit = F_GROUP;
        f.layerGroupId = parseNullableCount(text, v, 'layer_group_id');
        break;
      case 'type':
        bit = F_TYPE;
        f.typeStart = v;
        f.type = parseString(text, v, 'event type');
        break;
      case 'parent_hash':
        bit = F_PARENT;
        f.parentHash = parseNullableHash(text, v, 'parent_hash');
        break;
      case 'blocks': {
        bit = F_BLOCKS;
        const blocks: StoredBlock[] = [];
        eachElement(text, v, 'blocks', (start) => blocks.push(parseStoredBlock(text, start)));
        f.blocks = blocks;
        break;
      }
      case 'block_hashes': {
        bit = F_HASHES;
        const hashes: WireBlockHash[] = [];
        eachElement(text, v, 'block_hashes', (start) => hashes.push(parseHash(text, start, 'block_hashes item')));
        f.blockHashes = hashes;
        break;
      }
      case 'block_hash':
        bit = F_HASH;
        f.blockHash = parseHash(text, v, 'block_hash');
        break;
      case 'cache_level':
        bit = F_LEVEL;
        f.cacheLevel = parseDiff(text, v, 'cache_level diff');
        break;
      case 'priority':
        bit = F_PRIORITY;
        f.priority = parseDiff(text, v, 'priority diff');
        break;
      case 'num_blocks_per_cache_level': {
        bit = F_NUM_BLOCKS;
        const counts: number[] = [];
        eachElement(text, v, 'num_blocks_per_cache_level', (start) =>
          counts.push(parseCount(text, start, 'num_blocks_per_cache_level item')),
        );
        f.numBlocksPerCacheLevel = counts;
        break;
      }
      default:
        pos = skipValue(text, v);
    }
    if (f.seen & bit) duplicate(key, j);
    f.seen |= bit;
    j = nextMember(text, pos);
  }
  return f;
}

function buildData(f: EventFields, objectStart: number): KvEventData {
  switch (f.type) {
    case null:
      return missing(objectStart, 'type', 'event data');
    case 'created':
      if (f.numBlocksPerCacheLevel === null) missing(objectStart, 'num_blocks_per_cache_level', 'created event');
      return { type: 'created', numBlocksPerCacheLevel: f.numBlocksPerCacheLevel };
    case 'stored':
      if (f.blocks === null) missing(objectStart, 'blocks', 'stored event');
      return { type: 'stored', parentHash: f.parentHash, blocks: f.blocks };
    case 'removed':
      if (f.blockHashes === null) missing(objectStart, 'block_hashes', 'removed event');
      return { type: 'removed', blockHashes: f.blockHashes };
    case 'updated':
      if (f.blockHash === null) missing(objectStart, 'block_hash', 'updated event');
      return { type: 'updated', blockHash: f.blockHash, cacheLevel: f.cacheLevel, priority: f.priority };
    case 'all_cleared':
      return { type: 'all_cleared' };
    default:
      return failValue(
        'unknown-event-type',
        `unknown event type ${JSON.stringify(f.type)} at offset ${f.typeStart} (expected created, stored, removed, updated or all_cleared)`,
        f.typeStart,
      );
  }
}

function parseItem(text: string, i: number): KvEvent {
  const f = parseEventFields(text, i, true);
  const end = pos;
  let data: KvEventData;
  let hashAlgo = f.hashAlgo;
  if (f.data !== null) {
    data = buildData(f.data, f.dataStart);
    if (!(f.seen & F_ALGO)) hashAlgo = f.data.hashAlgo;
  } else if (f.seen & F_TYPE) {
    data = buildData(f, i);
  } else {
    return missing(i, 'data', 'event');
  }
  pos = end;
  return {
    eventId: f.eventId,
    data,
    windowSize: f.windowSize,
    attentionDpRank: f.attentionDpRank,
    hashAlgo,
    layerGroupId: f.layerGroupId,
  };
}

// ---------------------------------------------------------------- document

function parseDocument(text: string, events: ParsedKvEvent[], issues: WireIssue[], itemIssues: { count: number; readonly max: number }): void {
  const n = text.length;
  const i = skipWs(text, text.charCodeAt(0) === 0xfeff ? 1 : 0);
  if (i >= n) {
    issues.push({ code: 'empty-input', message: 'the /kv_cache_events body is empty (expected a JSON array)', path: '$', offset: 0 });
    return;
  }
  if (text.charCodeAt(i) !== 91) {
    try {
      skipValue(text, i);
    } catch (e) {
      if (e instanceof ScanFailure) {
        issues.push(toIssue(e, pathAt(text, i, '$', e.offset)));
        return;
      }
      throw e;
    }
    issues.push({
      code: 'not-an-array',
      message: `the body must be a JSON array of events, found ${describe(text, i)} at offset ${i}`,
      path: '$',
      offset: i,
    });
    return;
  }
  let j = skipWs(text, i + 1);
  if (j < n && text.charCodeAt(j) === 93) {
    j++;
  } else {
    for (let index = 0; ; index++) {
      const itemStart = j;
      let end: number;
      try {
        const event = parseItem(text, itemStart);
        end = pos;
        events.push({ event, raw: text.slice(itemStart, end), index, offset: itemStart });
      } catch (e) {
        if (e instanceof ScanFailure && e.syntax) {
          issues.push(toIssue(e, pathAt(text, 0, '$', e.offset)));
          return;
        }
        if (itemIssues.count < itemIssues.max) {
          issues.push(
            e instanceof ScanFailure ? toIssue(e, pathAt(text, itemStart, `$[${index}]`, e.offset)) : internalIssue(e, itemStart),
          );
        }
        itemIssues.count++;
        try {
          end = skipValue(text, itemStart); // skip the bad item, keep the others
        } catch (s) {
          if (s instanceof ScanFailure) {
            issues.push(toIssue(s, pathAt(text, 0, '$', s.offset)));
            return;
          }
          throw s;
        }
      }
      j = skipWs(text, end);
      const d = text.charCodeAt(j);
      if (d === 44) {
        j = skipWs(text, j + 1);
        continue;
      }
      if (d === 93) {
        j++;
        break;
      }
      if (j >= n) {
        issues.push({ code: 'truncated-json', message: `input ends early at offset ${n} (truncated JSON)`, path: '$', offset: n });
        return;
      }
      issues.push({
        code: 'invalid-json',
        message: `expected ',' or ']' after item ${index} at offset ${j}, found ${excerpt(text, j)}`,
        path: '$',
        offset: j,
      });
      return;
    }
  }
  const rest = skipWs(text, j);
  if (rest < n) {
    issues.push({
      code: 'trailing-garbage',
      message: `unexpected ${excerpt(text, rest)} at offset ${rest} after the end of the array`,
      path: '$',
      offset: rest,
    });
  }
}

export interface ParseKvEventsOptions {
  /** at most this many bad-item issues are listed (a flood of bad items stays bounded); default 1000 */
  readonly maxItemIssues?: number;
}

/**
 * Parses a `/kv_cache_events` body. Never throws: every problem is an issue with a JSON path and an offset.
 * Beyond `maxItemIssues` bad items, one 'issues-suppressed' issue says how many more were skipped.
 */
export function parseKvEvents(text: string, options: ParseKvEventsOptions = {}): KvEventsParse {
  const events: ParsedKvEvent[] = [];
  const issues: WireIssue[] = [];
  const itemIssues = { count: 0, max: options.maxItemIssues ?? 1000 };
  try {
    parseDocument(text, events, issues, itemIssues);
  } catch (e) {
    issues.push(internalIssue(e, null));
  }
  if (itemIssues.count > itemIssues.max) {
    const more = itemIssues.count - itemIssues.max;
    issues.push({ code: 'issues-suppressed', message: `${more} more bad items were skipped without an issue each`, path: '$', offset: 0 });
  }
  return { events, issues };
}
