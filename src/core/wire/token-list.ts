// Token id lists typed by people or stored in files: integers 0..2^32-1 separated by commas and/or whitespace.
// A hand scanner: a 5 M-token file parses in tens of milliseconds without a split() array of strings.
import type { WireIssue } from './wire-issue.js';
import type { WireIssueCode } from './wire-issue-codes.js';
import { doubledUint32 } from '../tables/doubled-uint32.js';

export type TokenListResult =
  { readonly ok: true; readonly tokens: Uint32Array } | { readonly ok: false; readonly issue: WireIssue };

const MAX_TOKEN_ID = 0xffff_ffff;

function isSeparator(code: number): boolean {
  // ',' space tab CR LF
  return code === 44 || code === 32 || code === 9 || code === 13 || code === 10;
}

function fail(code: WireIssueCode, message: string, offset: number): TokenListResult {
  return { ok: false, issue: { code, message, path: '$', offset } };
}

export function parseTokenList(text: string): TokenListResult {
  let tokens = new Uint32Array(Math.max(16, text.length >> 2));
  let count = 0;
  let i = 0;
  const n = text.length;
  let expectValue = true; // an empty item between two commas is an error
  while (i < n) {
    const c = text.charCodeAt(i);
    if (isSeparator(c)) {
      if (c === 44) {
        if (expectValue) return fail('empty-token', `empty token id at offset ${i}`, i);
        expectValue = true;
      }
      i++;
      continue;
    }
    const start = i;
    let value = 0;
    while (i < n && !isSeparator(text.charCodeAt(i))) {
      const d = text.charCodeAt(i) - 48;
      if (d < 0 || d > 9) {
        let end = i;
        while (end < n && end - start < 32 && !isSeparator(text.charCodeAt(end))) end++;
        const shown = text.slice(start, end);
        return fail(
          'not-a-token-id',
          `'${shown}' at offset ${start} is not a token id (an integer 0..${MAX_TOKEN_ID})`,
          start,
        );
      }
      value = value * 10 + d;
      if (value > MAX_TOKEN_ID)
        return fail('token-id-out-of-range', `token id at offset ${start} exceeds ${MAX_TOKEN_ID}`, start);
      i++;
    }
    if (count === tokens.length) tokens = doubledUint32(tokens);
    tokens[count++] = value;
    expectValue = false;
  }
  if (count > 0 && expectValue) {
    // trailing comma
    const last = text.lastIndexOf(',');
    return fail('empty-token', `empty token id at offset ${last + 1}`, last + 1);
  }
  return { ok: true, tokens: tokens.slice(0, count) };
}
