// A generic lossless JSON parser for the non-hot payloads (/server_info, usage, /perf_metrics, configs).
// Integer tokens (no fraction, no exponent) come back as bigint, exact at any size; tokens with a fraction or an
// exponent come back as number. So `typeof v === 'bigint'` tells "written as an integer" from "written as a float",
// and a u64 hash can never be rounded. Objects have a null prototype (a "__proto__" key is plain data).
//
// Own code rather than the `lossless-json` package: it shares the strict scanner of the hot parser, so both
// accept exactly the same JSON and report problems as WireIssues with a JSON path and an offset (the package
// throws SyntaxErrors whose position lives in the message text), and the core stays dependency-free.
import type { WireIssue } from './wire-issue.js';
import {
  MAX_DEPTH,
  ScanFailure,
  decodeString,
  failSyntax,
  nextElement,
  nextMember,
  numberShape,
  readMemberKey,
  scanNumber,
  scanString,
  skipValue,
  skipWs,
  stringHadEscape,
  walkEnd,
} from './json-scan.js';
import { internalIssue, pathAt, toIssue } from './json-path.js';

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

let pos = 0;

function parseValue(text: string, i: number, depth: number, issues: WireIssue[]): JsonValue {
  const c = text.charCodeAt(i);
  if (c === 34) {
    pos = scanString(text, i);
    return decodeString(text, i, pos, stringHadEscape);
  }
  if (c === 45 || (c >= 48 && c <= 57)) {
    pos = scanNumber(text, i);
    const token = text.slice(i, pos);
    if (numberShape.fraction || numberShape.exponent) return Number(token);
    return BigInt(token);
  }
  if (c === 123) {
    if (depth >= MAX_DEPTH) return failSyntax('too-deep', `nesting deeper than ${MAX_DEPTH} at offset ${i}`, i);
    const obj = Object.create(null) as JsonObject;
    let j = skipWs(text, i + 1);
    if (text.charCodeAt(j) === 125) {
      pos = j + 1;
      return obj;
    }
    for (; j >= 0; j = nextMember(text, pos)) {
      const key = readMemberKey(text, j);
      const v = walkEnd;
      if (Object.hasOwn(obj, key)) {
        issues.push({
          code: 'duplicate-key',
          message: `key ${JSON.stringify(key)} repeated at offset ${j}; the last value wins`,
          path: '',
          offset: j,
        });
      }
      obj[key] = parseValue(text, v, depth + 1, issues);
    }
    pos = walkEnd;
    return obj;
  }
  if (c === 91) {
    if (depth >= MAX_DEPTH) return failSyntax('too-deep', `nesting deeper than ${MAX_DEPTH} at offset ${i}`, i);
    const arr: JsonValue[] = [];
    let j = skipWs(text, i + 1);
    if (text.charCodeAt(j) === 93) {
      pos = j + 1;
      return arr;
    }
    for (; j >= 0; j = nextElement(text, pos)) arr.push(parseValue(text, j, depth + 1, issues));
    pos = walkEnd;
    return arr;
  }
  // literals and garbage: the validating skipper says which
  pos = skipValue(text, i);
  if (c === 116) return true;
  if (c === 102) return false;
  return null;
}

/** Parses one JSON document. Never throws. */
export function parseLosslessJson(text: string): LosslessJsonParse {
  const issues: WireIssue[] = [];
  try {
    const start = skipWs(text, text.charCodeAt(0) === 0xfeff ? 1 : 0);
    if (start >= text.length) {
      return {
        value: undefined,
        issues: [{ code: 'empty-input', message: 'the input is empty (expected JSON)', path: '$', offset: 0 }],
      };
    }
    const value = parseValue(text, start, 0, issues);
    const rest = skipWs(text, pos);
    for (let k = 0; k < issues.length; k++) {
      const issue = issues[k];
      if (issue !== undefined && issue.path === '')
        issues[k] = { ...issue, path: pathAt(text, start, '$', issue.offset ?? 0) };
    }
    if (rest < text.length) {
      issues.push({
        code: 'trailing-garbage',
        message: `unexpected ${JSON.stringify(text.slice(rest, rest + 24))} at offset ${rest} after the JSON value`,
        path: '$',
        offset: rest,
      });
      return { value: undefined, issues };
    }
    return { value, issues };
  } catch (e) {
    if (e instanceof ScanFailure) return { value: undefined, issues: [toIssue(e, pathAt(text, 0, '$', e.offset))] };
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
