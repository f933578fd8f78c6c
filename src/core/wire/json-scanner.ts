// Strict JSON scanning over UTF-8 bytes, shared by the hot `/kv_cache_events` parser and the generic lossless parser.
// A JsonScanner is one pass over one input: its methods take an offset and return the offset after what they
// consumed, and leave side results (the end of a walk, whether a string had an escape, a number's shape) in the
// scanner's own fields, so two parses never share state. Problems are thrown as ScanFailure (caught inside the
// parsers) and turned into WireIssues by the callers, which never throw.
import { decodeStringBytes, scanEscape, scanUtf8Sequence } from './json-string-bytes.js';
import { failSyntax, failTruncated } from './scan-failure.js';
import type { StringTable } from './string-table.js';

/** Nesting limit of the validating skipper and the generic parser, so hostile input cannot blow the stack. */
export const MAX_DEPTH = 256;

const UTF8 = new TextDecoder();

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
    return failTruncated(this.length);
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
        j = scanEscape(b, n, j);
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
        j = this.lenientUtf8 ? j + 1 : scanUtf8Sequence(b, n, j, c);
        continue;
      }
      j++;
    }
    return this.truncated();
  }

  /** The value of a string just validated by scanString (`start` at the quote, `end` after the closing quote). */
  decodeString(start: number, end: number): string {
    return decodeStringBytes(this.bytes, start, end, this.hadEscape, this.hadNonAscii);
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
