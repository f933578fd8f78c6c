// A generic lossless JSON parser for the non-hot payloads (/server_info, usage, /perf_metrics, configs).
// Integer tokens (no fraction, no exponent) come back as bigint, exact at any size; tokens with a fraction or an
// exponent come back as number. So `typeof v === 'bigint'` tells "written as an integer" from "written as a float",
// and a u64 hash can never be rounded. Objects have a null prototype (a "__proto__" key is plain data).
//
// Own code rather than the `lossless-json` package: it shares the strict scanner of the hot parser, so both
// accept exactly the same JSON and report problems as WireIssues with a JSON path and an offset (the package
// throws SyntaxErrors whose position lives in the message text), and the core stays dependency-free.
import type { WireIssue } from './wire-issue.js';
import { JsonScanner, MAX_DEPTH } from './json-scanner.js';
import { ScanFailure, failSyntax } from './scan-failure.js';
import { internalIssue, pathAt, toIssue } from './json-path.js';
import { issuesInText, utf8Of } from './wire-input.js';
import { KvsentinelError } from '../errors.js';

export type JsonValue = null | boolean | string | bigint | number | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

export interface LosslessJsonParse {
  /** undefined when the text is not JSON (see issues) */
  readonly value: JsonValue | undefined;
  /** fatal problems, and non-fatal ones ('duplicate-key': the last value wins, as in JSON.parse) */
  readonly issues: WireIssue[];
}

function parseValue(s: JsonScanner, i: number, depth: number, issues: WireIssue[]): JsonValue {
  const c = s.bytes[i] ?? -1;
  if (c === 34) return s.readString(i);
  if (c === 45 || (c >= 48 && c <= 57)) {
    s.pos = s.scanNumber(i);
    const token = s.text(i, s.pos);
    if (s.fraction || s.exponent) return Number(token);
    return BigInt(token);
  }
  if (c === 123 || c === 91) {
    if (depth >= MAX_DEPTH) return failSyntax('too-deep', `nesting deeper than ${MAX_DEPTH} at offset ${i}`, i);
    if (c === 91) {
      const arr: JsonValue[] = [];
      for (let j = s.openContainer(i); j >= 0; j = s.nextElement(s.pos)) arr.push(parseValue(s, j, depth + 1, issues));
      return arr;
    }
    const obj = Object.create(null) as JsonObject;
    for (let j = s.openContainer(i); j >= 0; j = s.nextMember(s.pos)) {
      const key = s.readMemberKey(j);
      if (Object.hasOwn(obj, key)) {
        issues.push({
          code: 'duplicate-key',
          message: `key ${JSON.stringify(key)} repeated at offset ${j}; the last value wins`,
          path: '',
          offset: j,
        });
      }
      obj[key] = parseValue(s, s.pos, depth + 1, issues);
    }
    return obj;
  }
  // literals and garbage: the validating skipper says which
  s.pos = s.skipValue(i);
  if (c === 116) return true;
  if (c === 102) return false;
  return null;
}

/** Parses one JSON document (its UTF-8 bytes, or a string: offsets then in the string's units). Never throws. */
export function parseLosslessJson(input: string | Uint8Array): LosslessJsonParse {
  if (input instanceof Uint8Array) return parseBytes(input);
  if (typeof input !== 'string')
    return { value: undefined, issues: [internalIssue(new KvsentinelError('internal', 'not text'), null)] };
  const bytes = utf8Of(input);
  const parsed = parseBytes(bytes);
  return { value: parsed.value, issues: issuesInText(parsed.issues, bytes, input) };
}

function parseBytes(bytes: Uint8Array): LosslessJsonParse {
  const issues: WireIssue[] = [];
  const s = new JsonScanner(bytes);
  try {
    const start = s.skipWs(bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0);
    if (start >= s.length) {
      return {
        value: undefined,
        issues: [{ code: 'empty-input', message: 'the input is empty (expected JSON)', path: '$', offset: 0 }],
      };
    }
    const value = parseValue(s, start, 0, issues);
    const rest = s.skipWs(s.pos);
    for (let k = 0; k < issues.length; k++) {
      const issue = issues[k];
      if (issue !== undefined && issue.path === '')
        issues[k] = { ...issue, path: pathAt(s, start, '$', issue.offset ?? 0) };
    }
    if (rest < s.length) {
      issues.push({
        code: 'trailing-garbage',
        message: `unexpected ${JSON.stringify(s.text(rest, rest + 24))} at offset ${rest} after the JSON value`,
        path: '$',
        offset: rest,
      });
      return { value: undefined, issues };
    }
    return { value, issues };
  } catch (e) {
    if (e instanceof ScanFailure) return { value: undefined, issues: [toIssue(e, pathAt(s, 0, '$', e.offset))] };
    return { value: undefined, issues: [internalIssue(e, null)] };
  }
}

export function isJsonObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** True when the token was written as an integer (no fraction, no exponent). */
export function isJsonInteger(value: JsonValue | undefined): value is bigint {
  return typeof value === 'bigint';
}

/** The value as a JS number when it is a number token and finite; integers beyond 2^53 are rounded. */
export function jsonToNumber(value: JsonValue | undefined): number | null {
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  return null;
}

/** The value as a JS number when it is an integer token within ±(2^53-1). */
export function jsonToSafeInteger(value: JsonValue | undefined): number | null {
  if (typeof value !== 'bigint') return null;
  return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= -BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : null;
}
