// Scalars of the `/kv_cache_events` parser (parse-kv-events.ts) over a KvEventScanner: each parse* function reads
// one value at an offset and leaves `s.pos` after it. Problems are thrown as ScanFailure and become WireIssues in
// parse-kv-events.ts.
import type { HashAlgo, WireBlockHash } from './kv-event.js';
import { HASH_ALGOS } from './kv-event.js';
import type { WireIssueCode } from './wire-issue-codes.js';
import { decimalBytesFitU64 } from './u64-decimal.js';
import { JsonScanner } from './json-scanner.js';
import { failValue } from './scan-failure.js';
import { StringTable } from './string-table.js';

const TWO_32 = 0x1_0000_0000;
const LITTLE_ENDIAN = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1;
const U64_LO = LITTLE_ENDIAN ? 0 : 1;
const U64_HI = LITTLE_ENDIAN ? 1 : 0;
export const MAX_U32 = 0xffff_ffff;
const HASH_ALGO_TABLE = new StringTable(HASH_ALGOS);

/**
 * Token ids of one body's blocks. Each block's ids are a view of one shared arena (one allocation per body, not per
 * block): the views outlive the parse (observations carry them), so the arena is never rewritten, only replaced by a
 * larger one when full. Extra ids are rare: a reused scratch, copied out only when a block has a non-zero one.
 */
export class TokenArena {
  ids: Uint32Array;
  extras = new Uint32Array(256);
  /** where the block being read starts in `ids` */
  start = 0;
  /** ids written so far in `ids` (the block being read is [start, used)) */
  used = 0;
  /** the extra id of the last token the general path read */
  lastExtra = 0;

  constructor(expectedTokens: number) {
    this.ids = new Uint32Array(Math.max(64, expectedTokens));
  }

  /** Room for one more id of the block being read; moves its partial span into a larger arena when full. */
  grow(): void {
    const partial = this.used - this.start;
    const next = new Uint32Array(Math.max(this.ids.length * 2, partial * 2, 1024));
    next.set(this.ids.subarray(this.start, this.used));
    this.ids = next;
    this.start = 0;
    this.used = partial;
  }

  growExtras(): void {
    const next = new Uint32Array(this.extras.length * 2);
    next.set(this.extras);
    this.extras = next;
  }

  /** The block just read: its ids (a view) and extra ids (null when all are 0); the next block starts after it. */
  takeIds(): Uint32Array {
    const view = this.ids.subarray(this.start, this.used);
    this.start = this.used;
    return view;
  }
}

// the compact spelling of a token is at least this long (`{"type":"unique_token","token_id":0,"token_extra_id":0}`)
const MIN_TOKEN_BYTES = 56;

/** One pass over one `/kv_cache_events` body: the JSON scanner plus the parser's scratch. */
export class KvEventScanner extends JsonScanner {
  readonly tokens: TokenArena;
  // one u64 assembled from two u32 halves, in platform byte order
  readonly #u64 = new BigUint64Array(1);
  readonly #halves = new Uint32Array(this.#u64.buffer);

  u64(hi: number, lo: number): bigint {
    this.#halves[U64_LO] = lo;
    this.#halves[U64_HI] = hi;
    return this.#u64[0]!;
  }

  constructor(bytes: Uint8Array) {
    super(bytes);
    this.tokens = new TokenArena(Math.ceil(bytes.length / MIN_TOKEN_BYTES) + 16);
  }
}

export function wrongType(s: JsonScanner, i: number, what: string, expected: string): never {
  if (i >= s.length) return s.truncated();
  s.skipValue(i); // broken syntax outranks a wrong type
  return failValue('wrong-type', `${what} must be ${expected}, found ${s.describe(i)} at offset ${i}`, i);
}

function parseHexHash(s: KvEventScanner, i: number, what: string): string {
  const end = s.scanString(i);
  const b = s.bytes;
  let upper = false;
  let hex = !s.hadEscape && end - i === 66;
  for (let k = i + 1; hex && k < end - 1; k++) {
    const h = b[k]!;
    if (h >= 65 && h <= 70) upper = true;
    else if (!((h >= 48 && h <= 57) || (h >= 97 && h <= 102))) hex = false;
  }
  if (!hex) {
    // an escaped spelling of hex digits is still hex: decode and judge the value
    const value = s.decodeString(i, end);
    if (s.hadEscape && /^[0-9a-fA-F]{64}$/.test(value)) {
      s.pos = end;
      return value.toLowerCase();
    }
    return failValue(
      'invalid-hash-string',
      `${what} string must be 64 hex digits (a v2_sha256 key), found ${s.excerpt(i)} at offset ${i}`,
      i,
    );
  }
  s.pos = end;
  const value = s.text(i + 1, end - 1);
  return upper ? value.toLowerCase() : value;
}

function numberProblem(s: KvEventScanner, i: number, end: number, what: string): void {
  if (s.negative) {
    failValue('hash-negative', `${what} ${s.text(i, end)} at offset ${i} is negative; hashes are unsigned 64-bit`, i);
  }
  if (s.exponent) {
    failValue(
      'hash-exponent',
      `${what} ${s.text(i, end)} at offset ${i} is in exponent form; an exact hash is an integer`,
      i,
    );
  }
  if (s.fraction) {
    failValue('hash-float', `${what} ${s.text(i, end)} at offset ${i} has a fraction; an exact hash is an integer`, i);
  }
  if (!decimalBytesFitU64(s.bytes, i, end)) {
    failValue('hash-out-of-range', `${what} ${s.text(i, end)} at offset ${i} exceeds 2^64-1`, i);
  }
}

export function parseHash(s: KvEventScanner, i: number, what: string): WireBlockHash {
  const b = s.bytes;
  const c = b[i] ?? -1;
  if (c === 34) return parseHexHash(s, i, what);
  if (c >= 48 && c <= 57) {
    // fast path: accumulate the value as two exact uint32 halves (no text, one BigInt); anything unusual
    // (fraction, exponent, leading zero, > 20 digits, > 2^64-1) falls through to the checked path below.
    // Up to 15 digits in one exact double, then the rest digit by digit with a carry into the high half.
    let v = 0;
    let k = i;
    const head = Math.min(s.length, i + 15);
    for (; k < head; k++) {
      const d = b[k]! - 48;
      if (d < 0 || d > 9) break;
      v = v * 10 + d;
    }
    let hi = Math.floor(v / TWO_32);
    let lo = v - hi * TWO_32;
    if (k === head) {
      const limit = Math.min(s.length, i + 21);
      for (; k < limit; k++) {
        const d = b[k]! - 48;
        if (d < 0 || d > 9) break;
        const next = lo * 10 + d;
        const carry = Math.floor(next / TWO_32);
        lo = next - carry * TWO_32;
        hi = hi * 10 + carry;
      }
    }
    const after = (b[k] ?? 0) | 32; // '.' → 46, 'e'/'E' → 101
    if (k - i <= 20 && k < s.length && hi <= MAX_U32 && after !== 46 && after !== 101 && (c !== 48 || k === i + 1)) {
      s.pos = k;
      return hi === 0 ? BigInt(lo) : s.u64(hi, lo);
    }
  }
  if (c === 45 || (c >= 48 && c <= 57)) {
    const end = s.scanNumber(i);
    numberProblem(s, i, end, what);
    s.pos = end;
    return BigInt(s.text(i, end));
  }
  return wrongType(s, i, what, 'an unsigned integer or a 64-hex string');
}

export function parseNullableHash(s: KvEventScanner, i: number, what: string): WireBlockHash | null {
  if (s.isNull(i)) {
    s.pos = i + 4;
    return null;
  }
  return parseHash(s, i, what);
}

/** Unsigned integer ≤ max (a JS number). */
export function parseUint(s: JsonScanner, i: number, what: string, max: number, rangeCode: WireIssueCode): number {
  const b = s.bytes;
  const c = b[i] ?? -1;
  if (c === 45 || (c >= 48 && c <= 57)) {
    const end = s.scanNumber(i);
    if (s.fraction || s.exponent) {
      return failValue('not-an-integer', `${what} ${s.text(i, end)} at offset ${i} is not an integer`, i);
    }
    if (s.negative) return failValue(rangeCode, `${what} ${s.text(i, end)} at offset ${i} is negative`, i);
    // ≤ 15 digits accumulate exactly; longer ones convert exactly up to 2^53-1 and round to ≥ 2^53 beyond it
    let v = 0;
    if (end - i <= 15) for (let k = i; k < end; k++) v = v * 10 + b[k]! - 48;
    else v = Number(s.text(i, end));
    if (v > max) return failValue(rangeCode, `${what} ${s.text(i, end)} at offset ${i} exceeds ${max}`, i);
    s.pos = end;
    return v;
  }
  return wrongType(s, i, what, 'an unsigned integer');
}

export function parseCount(s: JsonScanner, i: number, what: string): number {
  return parseUint(s, i, what, Number.MAX_SAFE_INTEGER, 'number-out-of-range');
}

export function parseNullableCount(s: JsonScanner, i: number, what: string): number | null {
  if (s.isNull(i)) {
    s.pos = i + 4;
    return null;
  }
  return parseCount(s, i, what);
}

export function parseString(s: JsonScanner, i: number, what: string): string {
  if (s.bytes[i] !== 34) return wrongType(s, i, what, 'a string');
  return s.readString(i);
}

export function parseNullableString(s: JsonScanner, i: number, what: string): string | null {
  if (s.isNull(i)) {
    s.pos = i + 4;
    return null;
  }
  return parseString(s, i, what);
}

/** A string value that must be one of `table`'s names: its id; pos after it. */
export function parseEnum(s: JsonScanner, i: number, what: string, table: StringTable): number {
  if (s.bytes[i] !== 34) return wrongType(s, i, what, 'a string');
  return s.stringId(i, table);
}

export function parseHashAlgo(s: JsonScanner, i: number): HashAlgo | null {
  if (s.isNull(i)) {
    s.pos = i + 4;
    return null;
  }
  const id = parseEnum(s, i, 'hash_algo', HASH_ALGO_TABLE);
  if (id >= 0) return HASH_ALGOS[id]!;
  return failValue(
    'unknown-hash-algo',
    `hash_algo ${JSON.stringify(s.decodeString(i, s.pos))} at offset ${i} is not a known algorithm`,
    i,
  );
}

/** A nested object's "type" tag must be `expected` (a one-name table). */
export function expectTag(s: JsonScanner, i: number, expected: StringTable, what: string): void {
  if (parseEnum(s, i, `${what} type`, expected) === 0) return;
  failValue(
    'wrong-type-tag',
    `${what} has type ${JSON.stringify(s.decodeString(i, s.pos))} at offset ${i}, expected "${expected.names[0]}"`,
    i,
  );
}

/** Offset of the first key of the object at `i`, or -1 when it is empty (pos = after it). */
export function openObject(s: JsonScanner, i: number, what: string): number {
  if (s.bytes[i] !== 123) return wrongType(s, i, what, 'an object');
  return s.openContainer(i);
}

/** Offset of the first element of the array at `i`, or -1 when it is empty (pos = after it). */
export function openArray(s: JsonScanner, i: number, what: string): number {
  if (s.bytes[i] !== 91) return wrongType(s, i, what, 'an array');
  return s.openContainer(i);
}

/** A key seen twice in one object (its start at `keyStart`). */
export function duplicate(s: JsonScanner, keyStart: number): never {
  const key = s.decodeString(keyStart, s.scanString(keyStart));
  return failValue(
    'duplicate-key',
    `key "${key}" appears twice in one object (second at offset ${keyStart})`,
    keyStart,
  );
}

/**
 * Walks the members of the object at `i` (`what` names it in messages): `read(key, value)` reads the value of each
 * key of `keys` and leaves pos after it; other keys are skipped, a key seen twice fails before its value is read.
 * Leaves pos after the object. (For the small nested objects; the hot ones keep their loops inline.)
 */
export function eachMember(
  s: JsonScanner,
  i: number,
  what: string,
  keys: StringTable,
  read: (key: number, value: number) => void,
): void {
  let seen = 0;
  for (let j = openObject(s, i, what); j >= 0; j = s.nextMember(s.pos)) {
    const key = s.keyId(j, keys);
    if (key < 0) {
      s.pos = s.skipValue(s.pos);
      continue;
    }
    if (seen & (1 << key)) duplicate(s, j);
    seen |= 1 << key;
    read(key, s.pos);
  }
}

export function missing(objectStart: number, field: string, what: string): never {
  return failValue('missing-field', `${what} at offset ${objectStart} has no "${field}"`, objectStart, field);
}
