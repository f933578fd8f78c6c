// The `tokens` array of a stored block, TensorRT-LLM's biggest field: token ids straight into a reused Uint32Array
// scratch, through a bulk path for the compact spelling and a general path that reports every issue precisely.
import { skipValue, skipWs, unexpected } from './json-scan.js';
import {
  MAX_U32,
  cursor,
  duplicate,
  expectTag,
  missing,
  nextMember,
  openObject,
  parseUint,
  readKey,
  wrongType,
} from './kv-event-scan.js';

const TOKEN_PREFIX = '{"type":"unique_token","token_id":';
const TOKEN_EXTRA_KEY = ',"token_extra_id":';
const TOKEN_PREFIX_LENGTH = TOKEN_PREFIX.length;
const TOKEN_BETWEEN = `${TOKEN_EXTRA_KEY}0},${TOKEN_PREFIX}`;
const TOKEN_BETWEEN_LENGTH = TOKEN_BETWEEN.length;
const TOKEN_EXTRA_KEY_LENGTH = TOKEN_EXTRA_KEY.length;
const TOKEN_TAIL_LENGTH = `${TOKEN_EXTRA_KEY}0}`.length;
/** a run of compact tokens with extra id 0, each followed by ',' before the next token or by ']' (not consumed) */
const COMPACT_TOKEN_RUN =
  /(?:\{"type":"unique_token","token_id":(?:0|[1-9][0-9]{0,9}),"token_extra_id":0\}(?:,(?=\{)|(?=\])))*/y;

// Token scratch reused across blocks; each block copies out exactly its tokens.
let tokenScratch = new Uint32Array(1024);
let extraScratch = new Uint32Array(1024);
let tokenCount = 0;
let anyExtra = false;
// Values of the last token object parsed by the general (non-fast) path.
let slowTokenId = 0;
let slowExtraId = 0;

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
    const v = cursor.pos;
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
        cursor.pos = skipValue(text, v);
    }
    j = nextMember(text, cursor.pos);
  }
  const end = cursor.pos;
  if (id < 0) missing(i, 'token_id', 'token');
  slowTokenId = id;
  slowExtraId = extra;
  cursor.pos = end;
}

/** Parses a `tokens` array into the scratch (tokenCount, anyExtra); cursor.pos after it. */
export function parseTokens(text: string, i: number): void {
  if (text.charCodeAt(i) !== 91) wrongType(text, i, 'tokens', 'an array');
  let count = 0;
  let extras = false;
  let j = skipWs(text, i + 1);
  if (text.charCodeAt(j) === 93) {
    tokenCount = 0;
    anyExtra = false;
    cursor.pos = j + 1;
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
    cursor.pos = j + 1;
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
      j = cursor.pos;
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
      cursor.pos = j + 1;
      return;
    }
    unexpected(text, j, "',' or ']'");
  }
}

/** The ids of the last parsed `tokens` array, copied out of the scratch. */
export function copyTokens(): Uint32Array {
  return tokenScratch.slice(0, tokenCount);
}

/** Its extra ids, or null when every one was 0. */
export function copyTokenExtraIds(): Uint32Array | null {
  return anyExtra ? extraScratch.slice(0, tokenCount) : null;
}
