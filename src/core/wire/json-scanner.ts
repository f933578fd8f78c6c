// Strict JSON scanning over UTF-8 bytes, shared by the hot `/kv_cache_events` parser and the generic lossless parser.
// A JsonScanner is one pass over one input: its methods take an offset and return the offset after what they
// consumed, and leave side results (the end of a walk, whether a string had an escape, a number's shape) in the
// scanner's own fields, so two parses never share state. Problems are thrown as ScanFailure (caught inside the
// parsers) and turned into WireIssues by the callers, which never throw.
import type { WireIssueCode } from './wire-issue-codes.js';

/** Nesting limit of the validating skipper and the generic parser, so hostile input cannot blow the stack. */
export const MAX_DEPTH = 256;

const UTF8 = new TextDecoder();

// Not an Error: capturing a stack per failure made bad input ~50x slower to report, and these never escape.
export class ScanFailure {
  readonly code: WireIssueCode;
  readonly message: string;
  readonly offset: number;
  /** syntax failures break the document: item boundaries after them are unknowable */
  readonly syntax: boolean;
  /** for missing fields: the name appended to the path of the object at `offset` */
  readonly field: string | null;

  constructor(code: WireIssueCode, message: string, offset: number, syntax: boolean, field: string | null) {
    this.code = code;
    this.message = message;
    this.offset = offset;
    this.syntax = syntax;
    this.field = field;
  }
}

export function failSyntax(code: WireIssueCode, message: string, offset: number): never {
  // eslint-disable-next-line @typescript-eslint/only-throw-error -- internal control flow, caught by the parsers
  throw new ScanFailure(code, message, offset, true, null);
}

export function failValue(code: WireIssueCode, message: string, offset: number, field: string | null = null): never {
  // eslint-disable-next-line @typescript-eslint/only-throw-error -- internal control flow, caught by the parsers
  throw new ScanFailure(code, message, offset, false, field);
}

/** The bytes of an ASCII constant (keys, literals, templates of the fast paths). */
export function asciiBytes(text: string): Uint8Array {
  const out = new Uint8Array(text.length);
  for (let k = 0; k < text.length; k++) out[k] = text.charCodeAt(k);
  return out;
}

/** Known strings (object keys, enum values) looked up from their bytes without decoding them. */
export class StringTable {
  readonly names: readonly string[];
  /** by byte length: [bytes, id] pairs */
  readonly #byLength: (readonly [Uint8Array, number])[][] = [];

  constructor(names: readonly string[]) {
    this.names = names;
    names.forEach((name, id) => {
      const bucket = (this.#byLength[name.length] ??= []);
      bucket.push([asciiBytes(name), id]);
    });
  }

  /** id of the escape-free string bytes[start, end), or -1 */
  find(bytes: Uint8Array, start: number, end: number): number {
    const bucket = this.#byLength[end - start];
    if (bucket === undefined) return -1;
    for (const [name, id] of bucket) {
      let k = 0;
      while (k < name.length && bytes[start + k] === name[k]) k++;
      if (k === name.length) return id;
    }
    return -1;
  }
}

function isHexDigit(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);
}

function hexValue(c: number): number {
  return c <= 57 ? c - 48 : (c | 32) - 87;
}

export class JsonScanner {
  readonly bytes: Uint8Array;
  /** the same bytes, for the fast paths' 8-byte comparisons */
  readonly view: DataView;
  readonly length: number;
  /** offset after the last value a parse* step consumed (or the value start after readMemberKey) */
  pos = 0;
  /** set by scanString: whether the last scanned string had a backslash escape */
  hadEscape = false;
  /** set by scanString: whether the last scanned string had a byte ≥ 0x80 */
  hadNonAscii = false;
  /** set by readMemberKey / keyId: offset after the key's closing quote */
  keyEnd = 0;
  /**
   * While set, bytes that are not UTF-8 are passed over instead of failing: a parser skipping an item it rejected for
   * them (the JSON around them is intact, so the items after it can still be read).
   */
  lenientUtf8 = false;
  // shape of the last number scanned by scanNumber
  negative = false;
  fraction = false;
  exponent = false;

  constructor(bytes: Uint8Array) {
    this.bytes = bytes;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.length = bytes.length;
  }

  truncated(): never {
    return failSyntax('truncated-json', `input ends early at offset ${this.length} (truncated JSON)`, this.length);
  }

  /** A short, printable excerpt of the input at `offset` for messages. */
  excerpt(offset: number): string {
    const shown = UTF8.decode(this.bytes.subarray(offset, offset + 24));
    return JSON.stringify(offset + 24 < this.length ? `${shown}…` : shown);
  }

  unexpected(offset: number, expected: string): never {
    if (offset >= this.length) return this.truncated();
    return failSyntax(
      'invalid-json',
      `expected ${expected} at offset ${offset}, found ${this.excerpt(offset)}`,
      offset,
    );
  }

  /** What the value at `i` is, for messages. */
  describe(i: number): string {
    const c = this.bytes[i] ?? -1;
    if (c === 34) return 'a string';
    if (c === 123) return 'an object';
    if (c === 91) return 'an array';
    if (c === 116 || c === 102) return 'a boolean';
    if (c === 110) return 'null';
    if (c === 45 || (c >= 48 && c <= 57)) return 'a number';
    return this.excerpt(i);
  }

  skipWs(i: number): number {
    const b = this.bytes;
    const n = this.length;
    while (i < n) {
      const c = b[i]!;
      if (c === 32 || c === 10 || c === 13 || c === 9) i++;
      else break;
    }
    return i;
  }

  /** Whether the bytes at `i` are `expected`. */
  startsWith(i: number, expected: Uint8Array): boolean {
    const b = this.bytes;
    if (i + expected.length > this.length) return false;
    for (let k = 0; k < expected.length; k++) if (b[i + k] !== expected[k]) return false;
    return true;
  }

  isNull(i: number): boolean {
    const b = this.bytes;
    return b[i] === 110 && b[i + 1] === 117 && b[i + 2] === 108 && b[i + 3] === 108;
  }

  /**
   * Validates the string starting at the quote `i`; returns the offset after the closing quote.
   * Rejects raw control characters, bad escapes, unpaired surrogates (escaped, or encoded as bytes) and bytes that
   * are not UTF-8: they cannot come from a body a JSON producer wrote, so they mark corruption.
   */
  scanString(i: number): number {
    const b = this.bytes;
    const n = this.length;
    let j = i + 1;
    this.hadEscape = false;
    this.hadNonAscii = false;
    while (j < n) {
      const c = b[j]!;
      if (c === 34) return j + 1;
      if (c === 92) {
        this.hadEscape = true;
        j = this.#scanEscape(j);
        continue;
      }
      if (c < 0x20) {
        return failSyntax(
          'control-character',
          `raw control character U+${c.toString(16).padStart(4, '0')} at offset ${j} in a string (JSON requires an escape)`,
          j,
        );
      }
      if (c >= 0x80) {
        this.hadNonAscii = true;
        j = this.lenientUtf8 ? j + 1 : this.#scanMultiByte(j, c);
        continue;
      }
      j++;
    }
    return this.truncated();
  }

  #hex4(k: number): number {
    const b = this.bytes;
    let v = 0;
    for (let m = k; m < k + 4; m++) {
      const c = b[m]!;
      if (!isHexDigit(c)) return -1;
      v = v * 16 + hexValue(c);
    }
    return v;
  }

  /** One escape at the backslash `j`; returns the offset after it. */
  #scanEscape(j: number): number {
    const b = this.bytes;
    const n = this.length;
    if (j + 1 >= n) return this.truncated();
    const e = b[j + 1]!;
    if (e === 34 || e === 92 || e === 47 || e === 98 || e === 102 || e === 110 || e === 114 || e === 116) return j + 2;
    if (e !== 117) {
      return failSyntax('invalid-escape', `invalid escape \\${String.fromCharCode(e)} at offset ${j} in a string`, j);
    }
    if (j + 6 > n) return this.truncated();
    const unit = this.#hex4(j + 2);
    if (unit < 0) return failSyntax('invalid-escape', `invalid \\u escape at offset ${j} in a string`, j);
    if (unit >= 0xdc00 && unit <= 0xdfff) {
      return failSyntax('invalid-unicode', `unpaired low surrogate escape at offset ${j}`, j);
    }
    if (unit < 0xd800 || unit > 0xdbff) return j + 6;
    // a high surrogate needs an escaped low surrogate next
    if (j + 12 <= n && b[j + 6] === 92 && b[j + 7] === 117) {
      const low = this.#hex4(j + 8);
      if (low >= 0xdc00 && low <= 0xdfff) return j + 12;
    }
    if (j + 12 > n && this.#couldStartLowSurrogateEscape(j + 6)) return this.truncated();
    return failSyntax('invalid-unicode', `unpaired high surrogate escape at offset ${j}`, j);
  }

  /** Whether the rest of the input from `k` is a cut-off `\uDC00`..`\uDFFF` escape. */
  #couldStartLowSurrogateEscape(k: number): boolean {
    const b = this.bytes;
    for (let m = 0; k + m < this.length; m++) {
      const c = b[k + m]!;
      const ok =
        m === 0
          ? c === 92
          : m === 1
            ? c === 117
            : m === 2
              ? (c | 32) === 100
              : m === 3
                ? (c | 32) >= 99 && (c | 32) <= 102
                : isHexDigit(c);
      if (!ok) return false;
    }
    return true;
  }

  /** One UTF-8 sequence at `j` (lead byte `c` ≥ 0x80); returns the offset after it. */
  #scanMultiByte(j: number, c: number): number {
    const b = this.bytes;
    const size = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (size === 0) return this.#badUtf8(j);
    // the second byte's range depends on the lead (no overlong forms, no surrogates, nothing above U+10FFFF)
    const lo = c === 0xe0 ? 0xa0 : c === 0xf0 ? 0x90 : 0x80;
    const hi = c === 0xed ? 0x9f : c === 0xf4 ? 0x8f : 0xbf;
    for (let k = 1; k < size; k++) {
      if (j + k >= this.length) return this.truncated();
      const d = b[j + k]!;
      if (k === 1 && c === 0xed && d >= 0xa0 && d <= 0xbf) {
        // a UTF-16 surrogate written as bytes (what a lone surrogate in a JS string becomes)
        const unit = 0xd000 | ((d & 0x3f) << 6) | ((b[j + 2] ?? 0x80) & 0x3f);
        return failValue(
          'invalid-unicode',
          `unpaired surrogate U+${unit.toString(16)} at offset ${j} (not valid UTF-8 text)`,
          j,
        );
      }
      if (d < (k === 1 ? lo : 0x80) || d > (k === 1 ? hi : 0xbf)) return this.#badUtf8(j);
    }
    return j + size;
  }

  // not a syntax failure: the string still ends at its quote, so the item is skipped and the ones after it are read
  #badUtf8(j: number): never {
    return failValue(
      'invalid-unicode',
      `byte 0x${(this.bytes[j] ?? 0).toString(16)} at offset ${j} does not start valid UTF-8 text`,
      j,
    );
  }

  /** The value of a string already validated by scanString (`start` at the quote, `end` after the closing quote). */
  decodeString(start: number, end: number): string {
    const b = this.bytes;
    if (!this.hadEscape) {
      if (!this.hadNonAscii && end - start <= 34) {
        let out = '';
        for (let k = start + 1; k < end - 1; k++) out += String.fromCharCode(b[k]!);
        return out;
      }
      return UTF8.decode(b.subarray(start + 1, end - 1));
    }
    let out = '';
    let from = start + 1;
    let j = from;
    const last = end - 1;
    while (j < last) {
      if (b[j] !== 92) {
        j++;
        continue;
      }
      out += UTF8.decode(b.subarray(from, j));
      const e = b[j + 1]!;
      switch (e) {
        case 98:
          out += '\b';
          break;
        case 102:
          out += '\f';
          break;
        case 110:
          out += '\n';
          break;
        case 114:
          out += '\r';
          break;
        case 116:
          out += '\t';
          break;
        case 117:
          out += String.fromCharCode(this.#hex4(j + 2));
          j += 4;
          break;
        default:
          out += String.fromCharCode(e);
      }
      j += 2;
      from = j;
    }
    return out + UTF8.decode(b.subarray(from, last));
  }

  /** The string at the quote `i`, validated and decoded; pos after it. */
  readString(i: number): string {
    const end = this.scanString(i);
    this.pos = end;
    return this.decodeString(i, end);
  }

  /** Validates a JSON number at `i` (strict grammar); returns the offset after it and sets its shape. */
  scanNumber(i: number): number {
    const b = this.bytes;
    const n = this.length;
    let j = i;
    this.negative = false;
    this.fraction = false;
    this.exponent = false;
    if (b[j] === 45) {
      this.negative = true;
      j++;
    }
    if (j >= n) return this.truncated();
    let c = b[j]!;
    if (c === 48) {
      j++;
      const d = b[j] ?? -1;
      if (d >= 48 && d <= 57) return failSyntax('invalid-number', `number with a leading zero at offset ${i}`, i);
    } else if (c >= 49 && c <= 57) {
      j++;
      while (j < n && (c = b[j]!) >= 48 && c <= 57) j++;
    } else {
      return failSyntax('invalid-number', `invalid number at offset ${i}: ${this.excerpt(i)}`, i);
    }
    if (j < n && b[j] === 46) {
      this.fraction = true;
      j = this.#digits(j + 1, i, 'fraction');
    }
    if (j < n && (b[j]! | 32) === 101) {
      this.exponent = true;
      j++;
      c = b[j] ?? -1;
      if (c === 43 || c === 45) j++;
      j = this.#digits(j, i, 'exponent');
    }
    return j;
  }

  #digits(j: number, numberStart: number, what: string): number {
    const b = this.bytes;
    const start = j;
    let c: number;
    while (j < this.length && (c = b[j]!) >= 48 && c <= 57) j++;
    if (j === start) {
      if (j >= this.length) return this.truncated();
      return failSyntax('invalid-number', `number without ${what} digits at offset ${numberStart}`, numberStart);
    }
    return j;
  }

  /** The number text at [start, end) (messages, and the rare long numbers). */
  text(start: number, end: number): string {
    return UTF8.decode(this.bytes.subarray(start, end));
  }

  #expectLiteral(i: number, literal: string): number {
    const b = this.bytes;
    for (let k = 0; k < literal.length; k++) {
      if (i + k >= this.length) return this.truncated();
      if (b[i + k] !== literal.charCodeAt(k))
        return failSyntax('invalid-json', `unexpected ${this.excerpt(i)} at offset ${i}`, i);
    }
    return i + literal.length;
  }

  /** Validates any JSON value at `i` (whitespace already skipped); returns the offset after it. */
  skipValue(i: number, depth = 0): number {
    if (i >= this.length) return this.truncated();
    const b = this.bytes;
    const c = b[i]!;
    if (c === 34) return this.scanString(i);
    if (c === 45 || (c >= 48 && c <= 57)) return this.scanNumber(i);
    if (c === 123 || c === 91) {
      if (depth >= MAX_DEPTH) return failSyntax('too-deep', `nesting deeper than ${MAX_DEPTH} at offset ${i}`, i);
      const object = c === 123;
      let j = this.openContainer(i);
      for (; j >= 0; j = object ? this.nextMember(j) : this.nextElement(j)) {
        if (object) {
          this.readMemberKeyEnd(j);
          j = this.pos;
        }
        j = this.skipValue(j, depth + 1);
      }
      return this.pos;
    }
    if (c === 116) return this.#expectLiteral(i, 'true');
    if (c === 102) return this.#expectLiteral(i, 'false');
    if (c === 110) return this.#expectLiteral(i, 'null');
    return this.unexpected(i, 'a JSON value');
  }

  // ---- walking objects and arrays

  /** After the '{' or '[' at `i`: the first member's or element's offset, or -1 when empty (pos after it). */
  openContainer(i: number): number {
    const close = this.bytes[i] === 123 ? 125 : 93;
    const j = this.skipWs(i + 1);
    if (this.bytes[j] === close) {
      this.pos = j + 1;
      return -1;
    }
    return j;
  }

  /** Validates the key at `j` (a quote expected) and its ':'; pos = the value's start, whitespace skipped. */
  readMemberKeyEnd(j: number): void {
    if (this.bytes[j] !== 34) return this.unexpected(j, 'a string key');
    const keyEnd = this.scanString(j);
    this.keyEnd = keyEnd;
    const colon = this.skipWs(keyEnd);
    if (this.bytes[colon] !== 58) return this.unexpected(colon, "':'");
    this.pos = this.skipWs(colon + 1);
  }

  /** Reads the key at `j` and its ':'; pos = the value's start. */
  readMemberKey(j: number): string {
    this.readMemberKeyEnd(j);
    return this.decodeString(j, this.keyEnd);
  }

  /** The id of the key at `j` in `table` (-1 when unknown); pos = the value's start. */
  keyId(j: number, table: StringTable): number {
    this.readMemberKeyEnd(j);
    return this.#lookup(j, this.keyEnd, table);
  }

  /** The id of the string value at `i` in `table` (-1 when unknown); pos after it. */
  stringId(i: number, table: StringTable): number {
    const end = this.scanString(i);
    this.pos = end;
    return this.#lookup(i, end, table);
  }

  #lookup(start: number, end: number, table: StringTable): number {
    if (!this.hadEscape) return table.find(this.bytes, start + 1, end - 1);
    return table.names.indexOf(this.decodeString(start, end));
  }

  #nextItem(j: number, close: number, expected: string): number {
    const k = this.skipWs(j);
    const d = this.bytes[k];
    if (d === 44) return this.skipWs(k + 1);
    if (d === close) {
      this.pos = k + 1;
      return -1;
    }
    return this.unexpected(k, expected);
  }

  /** After a member value ending at `j`: the next key's offset, or -1 after the closing '}' (pos after it). */
  nextMember(j: number): number {
    return this.#nextItem(j, 125, "',' or '}'");
  }

  /** After an array element ending at `j`: the next element's offset, or -1 after the closing ']' (pos after it). */
  nextElement(j: number): number {
    return this.#nextItem(j, 93, "',' or ']'");
  }
}
