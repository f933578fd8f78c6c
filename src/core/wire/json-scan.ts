// Low-level JSON scanning over a string by char code, shared by the hot KV-event parser and the generic lossless
// parser. Functions take (text, position) and return the position after what they consumed; problems are thrown
// as ScanFailure (caught inside the parsers) and turned into WireIssues by the callers, which never throw.
import type { WireIssueCode } from './wire-issue-codes.js';

/** Nesting limit of the validating skipper and the generic parser, so hostile input cannot blow the stack. */
export const MAX_DEPTH = 256;

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

export function truncated(text: string): never {
  return failSyntax('truncated-json', `input ends early at offset ${text.length} (truncated JSON)`, text.length);
}

/** A short, printable excerpt of the input at `offset` for messages. */
export function excerpt(text: string, offset: number): string {
  const shown = text.slice(offset, offset + 24);
  return JSON.stringify(shown.length < text.length - offset ? `${shown}…` : shown);
}

export function unexpected(text: string, offset: number, expected: string): never {
  if (offset >= text.length) return truncated(text);
  return failSyntax('invalid-json', `expected ${expected} at offset ${offset}, found ${excerpt(text, offset)}`, offset);
}

export function skipWs(text: string, i: number): number {
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 32 || c === 10 || c === 13 || c === 9) i++;
    else break;
  }
  return i;
}

function isHexDigit(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);
}

/** Whether `rest` (the whole remaining input) is a cut-off `\uDC00`..`\uDFFF` escape. */
function couldStartLowSurrogateEscape(rest: string): boolean {
  for (let k = 0; k < rest.length; k++) {
    const c = rest.charCodeAt(k);
    const ok =
      k === 0
        ? c === 92
        : k === 1
          ? c === 117
          : k === 2
            ? (c | 32) === 100
            : k === 3
              ? (c | 32) >= 99 && (c | 32) <= 102
              : isHexDigit(c);
    if (!ok) return false;
  }
  return true;
}

/** Set by scanString: whether the last scanned string contained a backslash escape. */
export let stringHadEscape = false;

/**
 * Validates the string starting at the quote `i`; returns the offset after the closing quote.
 * Rejects raw control characters, bad escapes and unpaired surrogates (raw or escaped): they cannot come from a
 * UTF-8 body a JSON producer wrote, so they mark corruption.
 */
export function scanString(text: string, i: number): number {
  const n = text.length;
  let j = i + 1;
  stringHadEscape = false;
  while (j < n) {
    const c = text.charCodeAt(j);
    if (c === 34) return j + 1;
    if (c === 92) {
      stringHadEscape = true;
      if (j + 1 >= n) return truncated(text);
      const e = text.charCodeAt(j + 1);
      if (e === 117) {
        if (j + 6 > n) return truncated(text);
        for (let k = j + 2; k < j + 6; k++) {
          if (!isHexDigit(text.charCodeAt(k))) {
            return failSyntax('invalid-escape', `invalid \\u escape at offset ${j} in a string`, j);
          }
        }
        const unit = parseInt(text.slice(j + 2, j + 6), 16);
        if (unit >= 0xd800 && unit <= 0xdbff) {
          // needs an escaped low surrogate next
          if (
            j + 12 <= n &&
            text.charCodeAt(j + 6) === 92 &&
            text.charCodeAt(j + 7) === 117 &&
            /^[dD][c-fC-F][0-9a-fA-F]{2}$/.test(text.slice(j + 8, j + 12))
          ) {
            j += 12;
            continue;
          }
          if (j + 12 > n && couldStartLowSurrogateEscape(text.slice(j + 6))) return truncated(text);
          return failSyntax('invalid-unicode', `unpaired high surrogate escape at offset ${j}`, j);
        }
        if (unit >= 0xdc00 && unit <= 0xdfff) {
          return failSyntax('invalid-unicode', `unpaired low surrogate escape at offset ${j}`, j);
        }
        j += 6;
        continue;
      }
      // " \ / b f n r t
      if (e === 34 || e === 92 || e === 47 || e === 98 || e === 102 || e === 110 || e === 114 || e === 116) {
        j += 2;
        continue;
      }
      return failSyntax('invalid-escape', `invalid escape \\${String.fromCharCode(e)} at offset ${j} in a string`, j);
    }
    if (c < 0x20) {
      return failSyntax(
        'control-character',
        `raw control character U+${c.toString(16).padStart(4, '0')} at offset ${j} in a string (JSON requires an escape)`,
        j,
      );
    }
    if (c >= 0xd800 && c <= 0xdfff) {
      if (c <= 0xdbff && j + 1 < n) {
        const d = text.charCodeAt(j + 1);
        if (d >= 0xdc00 && d <= 0xdfff) {
          j += 2;
          continue;
        }
      }
      if (c <= 0xdbff && j + 1 >= n) return truncated(text);
      return failSyntax(
        'invalid-unicode',
        `unpaired surrogate U+${c.toString(16)} at offset ${j} (not valid UTF-8 text)`,
        j,
      );
    }
    j++;
  }
  return truncated(text);
}

/** The value of a string already validated by scanString (`start` at the quote, `end` after the closing quote). */
export function decodeString(text: string, start: number, end: number, hadEscape: boolean): string {
  if (!hadEscape) return text.slice(start + 1, end - 1);
  let out = '';
  let from = start + 1;
  let j = from;
  const last = end - 1;
  while (j < last) {
    if (text.charCodeAt(j) !== 92) {
      j++;
      continue;
    }
    out += text.slice(from, j);
    const e = text.charCodeAt(j + 1);
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
        out += String.fromCharCode(parseInt(text.slice(j + 2, j + 6), 16));
        j += 4;
        break;
      default:
        out += String.fromCharCode(e);
    }
    j += 2;
    from = j;
  }
  return out + text.slice(from, last);
}

/** Shape of the last number scanned by scanNumber. */
export const numberShape = { negative: false, fraction: false, exponent: false, intStart: 0, intEnd: 0 };

/** Validates a JSON number at `i` (strict grammar); returns the offset after it and fills numberShape. */
export function scanNumber(text: string, i: number): number {
  const n = text.length;
  let j = i;
  numberShape.negative = false;
  numberShape.fraction = false;
  numberShape.exponent = false;
  if (text.charCodeAt(j) === 45) {
    numberShape.negative = true;
    j++;
  }
  numberShape.intStart = j;
  if (j >= n) return truncated(text);
  let c = text.charCodeAt(j);
  if (c === 48) {
    j++;
    const d = text.charCodeAt(j);
    if (d >= 48 && d <= 57) return failSyntax('invalid-number', `number with a leading zero at offset ${i}`, i);
  } else if (c >= 49 && c <= 57) {
    j++;
    while (j < n) {
      c = text.charCodeAt(j);
      if (c >= 48 && c <= 57) j++;
      else break;
    }
  } else {
    return failSyntax('invalid-number', `invalid number at offset ${i}: ${excerpt(text, i)}`, i);
  }
  numberShape.intEnd = j;
  if (j < n && text.charCodeAt(j) === 46) {
    numberShape.fraction = true;
    j++;
    const start = j;
    while (j < n) {
      c = text.charCodeAt(j);
      if (c >= 48 && c <= 57) j++;
      else break;
    }
    if (j === start) {
      if (j >= n) return truncated(text);
      return failSyntax('invalid-number', `number without fraction digits at offset ${i}`, i);
    }
  }
  if (j < n && (text.charCodeAt(j) | 32) === 101) {
    numberShape.exponent = true;
    j++;
    c = text.charCodeAt(j);
    if (c === 43 || c === 45) j++;
    const start = j;
    while (j < n) {
      c = text.charCodeAt(j);
      if (c >= 48 && c <= 57) j++;
      else break;
    }
    if (j === start) {
      if (j >= n) return truncated(text);
      return failSyntax('invalid-number', `number without exponent digits at offset ${i}`, i);
    }
  }
  return j;
}

function expectLiteral(text: string, i: number, literal: string): number {
  if (text.startsWith(literal, i)) return i + literal.length;
  if (i + literal.length > text.length && literal.startsWith(text.slice(i))) return truncated(text);
  return failSyntax('invalid-json', `unexpected ${excerpt(text, i)} at offset ${i}`, i);
}

// ---- walking objects and arrays: shared by the lossless parser and the /kv_cache_events parser

/** Offset after what readMemberKey, nextMember or nextElement consumed last (saves returning pairs on hot paths). */
export let walkEnd = 0;

/** Reads the object key at `j` (a quote expected) and its ':'; walkEnd = the value's start, whitespace skipped. */
export function readMemberKey(text: string, j: number): string {
  if (text.charCodeAt(j) !== 34) return unexpected(text, j, 'a string key');
  const keyEnd = scanString(text, j);
  const key = decodeString(text, j, keyEnd, stringHadEscape);
  const colon = skipWs(text, keyEnd);
  if (text.charCodeAt(colon) !== 58) return unexpected(text, colon, "':'");
  walkEnd = skipWs(text, colon + 1);
  return key;
}

function nextItem(text: string, j: number, close: number, expected: string): number {
  const k = skipWs(text, j);
  const d = text.charCodeAt(k);
  if (d === 44) return skipWs(text, k + 1);
  if (d === close) {
    walkEnd = k + 1;
    return -1;
  }
  return unexpected(text, k, expected);
}

/** After a member value ending at `j`: the next key's offset, or -1 after the closing '}' (walkEnd = after it). */
export function nextMember(text: string, j: number): number {
  return nextItem(text, j, 125, "',' or '}'");
}

/** After an array element ending at `j`: the next element's offset, or -1 after the closing ']' (walkEnd = after it). */
export function nextElement(text: string, j: number): number {
  return nextItem(text, j, 93, "',' or ']'");
}

/** Validates any JSON value at `i` (whitespace already skipped); returns the offset after it. */
export function skipValue(text: string, i: number, depth = 0): number {
  if (i >= text.length) return truncated(text);
  const c = text.charCodeAt(i);
  if (c === 34) return scanString(text, i);
  if (c === 45 || (c >= 48 && c <= 57)) return scanNumber(text, i);
  if (c === 123 || c === 91) {
    if (depth >= MAX_DEPTH) return failSyntax('too-deep', `nesting deeper than ${MAX_DEPTH} at offset ${i}`, i);
    const close = c === 123 ? 125 : 93;
    let j = skipWs(text, i + 1);
    if (text.charCodeAt(j) === close) return j + 1;
    for (;;) {
      if (c === 123) {
        if (text.charCodeAt(j) !== 34) return unexpected(text, j, 'a string key');
        j = skipWs(text, scanString(text, j));
        if (text.charCodeAt(j) !== 58) return unexpected(text, j, "':'");
        j = skipWs(text, j + 1);
      }
      j = skipWs(text, skipValue(text, j, depth + 1));
      const d = text.charCodeAt(j);
      if (d === 44) {
        j = skipWs(text, j + 1);
        continue;
      }
      if (d === close) return j + 1;
      return unexpected(text, j, c === 123 ? "',' or '}'" : "',' or ']'");
    }
  }
  if (c === 116) return expectLiteral(text, i, 'true');
  if (c === 102) return expectLiteral(text, i, 'false');
  if (c === 110) return expectLiteral(text, i, 'null');
  return unexpected(text, i, 'a JSON value');
}
