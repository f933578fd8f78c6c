// Scalars and object walking of the `/kv_cache_events` parser (parse-kv-events.ts): each parse* function reads one
// value at an offset and leaves `cursor.pos` after it (a shared position saves returning pairs on the hot path).
// Problems are thrown as ScanFailure and become WireIssues in parse-kv-events.ts.
import type { HashAlgo, WireBlockHash } from './kv-event.js';
import { isHashAlgo } from './kv-event.js';
import type { WireIssueCode } from './wire-issue-codes.js';
import { decimalFitsU64 } from './u64-decimal.js';
import {
  decodeString,
  excerpt,
  nextElement,
  nextMember as nextMemberAt,
  readMemberKey,
  walkEnd,
  failValue,
  numberShape,
  scanNumber,
  scanString,
  skipValue,
  skipWs,
  stringHadEscape,
  truncated,
} from './json-scan.js';

/** Position after the last value parsed by a parse* function. */
export const cursor = { pos: 0 };

const TWO_32 = 0x1_0000_0000;
// one u64 read through two u32 halves, in platform byte order
const u64View = new BigUint64Array(1);
const u64Halves = new Uint32Array(u64View.buffer);
const LITTLE_ENDIAN = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1;
const U64_LO = LITTLE_ENDIAN ? 0 : 1;
const U64_HI = LITTLE_ENDIAN ? 1 : 0;
export const MAX_U32 = 0xffff_ffff;

export function describe(text: string, i: number): string {
  const c = text.charCodeAt(i);
  if (c === 34) return 'a string';
  if (c === 123) return 'an object';
  if (c === 91) return 'an array';
  if (c === 116 || c === 102) return 'a boolean';
  if (c === 110) return 'null';
  if (c === 45 || (c >= 48 && c <= 57)) return 'a number';
  return excerpt(text, i);
}

export function wrongType(text: string, i: number, what: string, expected: string): never {
  if (i >= text.length) return truncated(text);
  skipValue(text, i); // broken syntax outranks a wrong type
  return failValue('wrong-type', `${what} must be ${expected}, found ${describe(text, i)} at offset ${i}`, i);
}

export function isNull(text: string, i: number): boolean {
  return text.charCodeAt(i) === 110 && text.startsWith('null', i);
}

export function parseHash(text: string, i: number, what: string): WireBlockHash {
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
    cursor.pos = end;
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
      cursor.pos = k;
      if (hi === 0) return BigInt(lo);
      u64Halves[U64_LO] = lo;
      u64Halves[U64_HI] = hi;
      return u64View[0] ?? 0n;
    }
  }
  if (c === 45 || (c >= 48 && c <= 57)) {
    const end = scanNumber(text, i);
    if (numberShape.negative) {
      return failValue(
        'hash-negative',
        `${what} ${text.slice(i, end)} at offset ${i} is negative; hashes are unsigned 64-bit`,
        i,
      );
    }
    if (numberShape.exponent) {
      return failValue(
        'hash-exponent',
        `${what} ${text.slice(i, end)} at offset ${i} is in exponent form; an exact hash is an integer`,
        i,
      );
    }
    if (numberShape.fraction) {
      return failValue(
        'hash-float',
        `${what} ${text.slice(i, end)} at offset ${i} has a fraction; an exact hash is an integer`,
        i,
      );
    }
    const len = end - i;
    if (!decimalFitsU64(text, i, end)) {
      return failValue('hash-out-of-range', `${what} ${text.slice(i, end)} at offset ${i} exceeds 2^64-1`, i);
    }
    cursor.pos = end;
    if (len <= 15) {
      let v = 0;
      for (let k = i; k < end; k++) v = v * 10 + text.charCodeAt(k) - 48;
      return BigInt(v);
    }
    return BigInt(text.slice(i, end));
  }
  return wrongType(text, i, what, 'an unsigned integer or a 64-hex string');
}

export function parseNullableHash(text: string, i: number, what: string): WireBlockHash | null {
  if (isNull(text, i)) {
    cursor.pos = i + 4;
    return null;
  }
  return parseHash(text, i, what);
}

/** Unsigned integer ≤ max (a JS number). */
export function parseUint(text: string, i: number, what: string, max: number, rangeCode: WireIssueCode): number {
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
    cursor.pos = end;
    return v;
  }
  return wrongType(text, i, what, 'an unsigned integer');
}

export function parseCount(text: string, i: number, what: string): number {
  return parseUint(text, i, what, Number.MAX_SAFE_INTEGER, 'number-out-of-range');
}

export function parseNullableCount(text: string, i: number, what: string): number | null {
  if (isNull(text, i)) {
    cursor.pos = i + 4;
    return null;
  }
  return parseCount(text, i, what);
}

export function parseString(text: string, i: number, what: string): string {
  if (text.charCodeAt(i) !== 34) return wrongType(text, i, what, 'a string');
  const end = scanString(text, i);
  cursor.pos = end;
  return decodeString(text, i, end, stringHadEscape);
}

export function parseNullableString(text: string, i: number, what: string): string | null {
  if (isNull(text, i)) {
    cursor.pos = i + 4;
    return null;
  }
  return parseString(text, i, what);
}

export function parseHashAlgo(text: string, i: number): HashAlgo | null {
  const value = parseNullableString(text, i, 'hash_algo');
  if (value === null || isHashAlgo(value)) return value;
  return failValue(
    'unknown-hash-algo',
    `hash_algo ${JSON.stringify(value)} at offset ${i} is not a known algorithm`,
    i,
  );
}

export function expectTag(text: string, i: number, expected: string, what: string): void {
  const value = parseString(text, i, `${what} type`);
  if (value !== expected) {
    failValue('wrong-type-tag', `${what} has type ${JSON.stringify(value)} at offset ${i}, expected "${expected}"`, i);
  }
}

/** Reads the key at `j` (a quote expected); leaves cursor.pos at the value start. */
export function readKey(text: string, j: number): string {
  const key = readMemberKey(text, j);
  cursor.pos = walkEnd;
  return key;
}

/** After a member value ending at `j`: returns the next key offset, or -1 after the closing brace (cursor.pos = after it). */
export function nextMember(text: string, j: number): number {
  const k = nextMemberAt(text, j);
  if (k < 0) cursor.pos = walkEnd;
  return k;
}

/** Offset of the first key of the object at `i`, or -1 when it is empty (cursor.pos = after it). */
export function openObject(text: string, i: number, what: string): number {
  if (text.charCodeAt(i) !== 123) return wrongType(text, i, what, 'an object');
  const j = skipWs(text, i + 1);
  if (text.charCodeAt(j) === 125) {
    cursor.pos = j + 1;
    return -1;
  }
  return j;
}

export function duplicate(key: string, keyStart: number): never {
  return failValue(
    'duplicate-key',
    `key "${key}" appears twice in one object (second at offset ${keyStart})`,
    keyStart,
  );
}

export function missing(objectStart: number, field: string, what: string): never {
  return failValue('missing-field', `${what} at offset ${objectStart} has no "${field}"`, objectStart, field);
}

/** Calls `item` for each element of the array at `i` (item leaves cursor.pos after the element); cursor.pos after the array. */
export function eachElement(text: string, i: number, what: string, item: (start: number) => void): void {
  if (text.charCodeAt(i) !== 91) wrongType(text, i, what, 'an array');
  let j = skipWs(text, i + 1);
  if (text.charCodeAt(j) === 93) {
    cursor.pos = j + 1;
    return;
  }
  for (; j >= 0; j = nextElement(text, cursor.pos)) item(j);
  cursor.pos = walkEnd;
}
