// Splits a JSON array into the exact source bytes of each top-level item, without parsing values, so the relay can
// re-serve a worker's `/kv_cache_events` body byte for byte (hashes keep every digit) whatever the items contain.
import type { WireIssue } from '../wire/wire-issue.js';
import type { WireIssueCode } from '../wire/wire-issue-codes.js';
import { BETWEEN_LENGTH, isTokenBetween } from '../wire/compact-token-text.js';
import { issuesInText, utf8Of } from '../wire/wire-input.js';

export type SplitArrayResult<T = string> =
  { readonly ok: true; readonly items: T[] } | { readonly ok: false; readonly issue: WireIssue; readonly items: T[] };

const UTF8 = new TextDecoder();

const MAX_DEPTH = 512;

function isWs(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13;
}

function fail(code: WireIssueCode, message: string, offset: number, items: Uint8Array[]): SplitArrayResult<Uint8Array> {
  return { ok: false, issue: { code, message, path: '$', offset }, items };
}

/** splitJsonArray of a string: items as strings, offsets in the string's units (tests, text sources). */
export function splitJsonArray(text: string): SplitArrayResult {
  const bytes = utf8Of(text);
  const split = splitJsonArrayBytes(bytes);
  const items = split.items.map((item) => UTF8.decode(item));
  if (split.ok) return { ok: true, items };
  return { ok: false, issue: issuesInText([split.issue], bytes, text)[0]!, items };
}

/**
 * Items are returned trimmed of surrounding whitespace, as views of the body's bytes (one allocation a drain: the
 * relay's event buffer copies out the items it keeps longer than the rest of their body, BODY_VIEWS). Strings and nesting
 * are tracked so commas inside them do not split; item contents are not validated beyond bracket balance (the domain
 * parser judges them).
 *
 * Most of a TensorRT-LLM body is tokens in their compact spelling; the text between two of them
 * (`,"token_extra_id":0},{"type":"unique_token","token_id":`) closes one object and opens the next, so two or more
 * levels deep it changes nothing this walk tracks, and is passed in one step (`compactTokens`, off only to test that
 * the answer is the same).
 */
export function splitJsonArrayBytes(body: Uint8Array, compactTokens = true): SplitArrayResult<Uint8Array> {
  const items: Uint8Array[] = [];
  const n = body.length;
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  let i = 0;
  while (i < n && isWs(body[i]!)) i++;
  if (i >= n) return fail('empty-input', 'body is empty, expected a JSON array', 0, items);
  if (body[i]! !== 91) return fail('not-an-array', `expected '[' at offset ${i}`, i, items);
  i++;
  let expectItem = true;
  let sawItem = false;
  for (;;) {
    while (i < n && isWs(body[i]!)) i++;
    if (i >= n) return fail('truncated-json', `array not closed at offset ${n}`, n, items);
    const c = body[i]!;
    if (c === 93) {
      if (sawItem && expectItem) return fail('trailing-comma', `trailing comma before ']' at offset ${i}`, i, items);
      i++;
      break;
    }
    if (!expectItem) {
      if (c !== 44) return fail('expected-comma', `expected ',' or ']' at offset ${i}`, i, items);
      i++;
      expectItem = true;
      continue;
    }
    if (c === 44) return fail('empty-item', `empty array item at offset ${i}`, i, items);
    const start = i;
    let depth = 0;
    let valueEnded = false; // at depth 0 a value ended (closing bracket, string end or whitespace after a scalar)
    while (i < n) {
      const d = body[i]!;
      if (depth === 0 && valueEnded && !isWs(d) && d !== 44 && d !== 93) {
        return fail('expected-comma', `expected ',' or ']' at offset ${i}`, i, items);
      }
      if (d === 34) {
        i++;
        while (i < n) {
          const s = body[i]!;
          if (s === 92) i += 2;
          else if (s === 34) break;
          else i++;
        }
        if (i >= n)
          return fail('truncated-json', `string not closed (started in item at offset ${start})`, start, items);
        i++;
        if (depth === 0) valueEnded = true;
        continue;
      }
      if (d === 123 || d === 91) {
        if (++depth > MAX_DEPTH) return fail('too-deep', `nesting deeper than ${MAX_DEPTH} at offset ${i}`, i, items);
      } else if (d === 125 || d === 93) {
        if (depth === 0) break; // the closing ']' of the outer array
        depth--;
        if (depth === 0) valueEnded = true;
      } else if (d === 44 && depth === 0) {
        break;
      } else if (d === 44 && depth >= 2 && compactTokens && isTokenBetween(view, i)) {
        i += BETWEEN_LENGTH;
        continue;
      } else if (depth === 0 && isWs(d)) {
        valueEnded = true;
      }
      i++;
    }
    if (depth !== 0 || i >= n) return fail('truncated-json', `item at offset ${start} is not closed`, start, items);
    let end = i;
    while (end > start && isWs(body[end - 1]!)) end--;
    if (end === start) return fail('empty-item', `empty array item at offset ${start}`, start, items);
    items.push(body.subarray(start, end));
    sawItem = true;
    expectItem = false;
  }
  while (i < n && isWs(body[i]!)) i++;
  if (i < n) return fail('trailing-garbage', `unexpected data after the array at offset ${i}`, i, items);
  return { ok: true, items };
}
