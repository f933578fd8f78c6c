// The slow parts of a JSON string over UTF-8 bytes: escapes, multi-byte sequences and decoding a string that has
// either. JsonScanner.scanString runs the common case (ASCII without a backslash) itself and calls these for the
// rest. Each takes the input's bytes and its length and returns the offset after what it consumed; a problem is a
// ScanFailure (scan-failure.ts). Strings that cannot come from a body a JSON producer wrote (bad escapes, unpaired
// surrogates, bytes that are not UTF-8) mark corruption.
import { failSyntax, failTruncated, failValue } from './scan-failure.js';

const UTF8 = new TextDecoder();

function isHexDigit(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);
}

function hexValue(c: number): number {
  return c <= 57 ? c - 48 : (c | 32) - 87;
}

/** The four hex digits at `k` as a UTF-16 unit, or -1. */
function hex4(b: Uint8Array, k: number): number {
  let v = 0;
  for (let m = k; m < k + 4; m++) {
    const c = b[m]!;
    if (!isHexDigit(c)) return -1;
    v = v * 16 + hexValue(c);
  }
  return v;
}

/** Whether the rest of the input from `k` is a cut-off `\uDC00`..`\uDFFF` escape. */
function couldStartLowSurrogateEscape(b: Uint8Array, n: number, k: number): boolean {
  for (let m = 0; k + m < n; m++) {
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

/** One escape at the backslash `j` of the `n` bytes `b`; returns the offset after it. */
export function scanEscape(b: Uint8Array, n: number, j: number): number {
  if (j + 1 >= n) return failTruncated(n);
  const e = b[j + 1]!;
  if (e === 34 || e === 92 || e === 47 || e === 98 || e === 102 || e === 110 || e === 114 || e === 116) return j + 2;
  if (e !== 117) {
    return failSyntax('invalid-escape', `invalid escape \\${String.fromCharCode(e)} at offset ${j} in a string`, j);
  }
  if (j + 6 > n) return failTruncated(n);
  const unit = hex4(b, j + 2);
  if (unit < 0) return failSyntax('invalid-escape', `invalid \\u escape at offset ${j} in a string`, j);
  if (unit >= 0xdc00 && unit <= 0xdfff) {
    return failSyntax('invalid-unicode', `unpaired low surrogate escape at offset ${j}`, j);
  }
  if (unit < 0xd800 || unit > 0xdbff) return j + 6;
  // a high surrogate needs an escaped low surrogate next
  if (j + 12 <= n && b[j + 6] === 92 && b[j + 7] === 117) {
    const low = hex4(b, j + 8);
    if (low >= 0xdc00 && low <= 0xdfff) return j + 12;
  }
  if (j + 12 > n && couldStartLowSurrogateEscape(b, n, j + 6)) return failTruncated(n);
  return failSyntax('invalid-unicode', `unpaired high surrogate escape at offset ${j}`, j);
}

// not a syntax failure: the string still ends at its quote, so the item is skipped and the ones after it are read
function badUtf8(b: Uint8Array, j: number): never {
  return failValue(
    'invalid-unicode',
    `byte 0x${(b[j] ?? 0).toString(16)} at offset ${j} does not start valid UTF-8 text`,
    j,
  );
}

/** One UTF-8 sequence at `j` (lead byte `c` ≥ 0x80) of the `n` bytes `b`; returns the offset after it. */
export function scanUtf8Sequence(b: Uint8Array, n: number, j: number, c: number): number {
  const size = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
  if (size === 0) return badUtf8(b, j);
  // the second byte's range depends on the lead (no overlong forms, no surrogates, nothing above U+10FFFF)
  const lo = c === 0xe0 ? 0xa0 : c === 0xf0 ? 0x90 : 0x80;
  const hi = c === 0xed ? 0x9f : c === 0xf4 ? 0x8f : 0xbf;
  for (let k = 1; k < size; k++) {
    if (j + k >= n) return failTruncated(n);
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
    if (d < (k === 1 ? lo : 0x80) || d > (k === 1 ? hi : 0xbf)) return badUtf8(b, j);
  }
  return j + size;
}

/**
 * The value of a string already validated (`start` at the quote, `end` after the closing quote), given what its
 * scan saw: a backslash escape, a byte ≥ 0x80.
 */
export function decodeStringBytes(
  b: Uint8Array,
  start: number,
  end: number,
  hadEscape: boolean,
  hadNonAscii: boolean,
): string {
  if (!hadEscape) {
    if (!hadNonAscii && end - start <= 34) {
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
        out += String.fromCharCode(hex4(b, j + 2));
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
