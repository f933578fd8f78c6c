// Typed field reads over a lossless JSON tree for the small payload parsers: each wrong field becomes a
// WireIssue (path, and the offset looked up in the source text) and reads as null, so one odd field never loses
// the rest of a payload.
import type { WireIssue } from './wire-issue.js';
import type { WireIssueCode } from './wire-issue-codes.js';
import type { JsonObject, JsonValue } from './lossless-json.js';
import { isJsonObject, parseLosslessJson } from './lossless-json.js';
import type { PathSegments } from './json-path.js';
import { formatPath, offsetAt } from './json-path.js';

export type Path = PathSegments;

export class FieldReader {
  readonly text: string;
  readonly issues: WireIssue[];

  constructor(text: string, issues: WireIssue[]) {
    this.text = text;
    this.issues = issues;
  }

  issue(code: WireIssueCode, message: string, path: Path): void {
    const offset = offsetAt(this.text, path);
    const where = formatPath(path);
    this.issues.push({
      code,
      message: `${where}: ${message}${offset === null ? '' : ` (offset ${offset})`}`,
      path: where,
      offset,
    });
  }

  private wrongType(value: JsonValue, expected: string, path: Path): null {
    this.issue('wrong-type', `must be ${expected}, found ${describeJson(value)}`, path);
    return null;
  }

  /** Non-negative integer within 2^53-1; absent or null → null. */
  uint(obj: JsonObject, key: string, path: Path): number | null {
    const value = obj[key];
    if (value === undefined || value === null) return null;
    const at = [...path, key];
    if (typeof value === 'bigint') {
      if (value < 0n || value > BigInt(Number.MAX_SAFE_INTEGER)) {
        this.issue('number-out-of-range', `${value} is outside 0..2^53-1`, at);
        return null;
      }
      return Number(value);
    }
    if (typeof value === 'number') {
      this.issue('not-an-integer', `${value} is not written as an integer`, at);
      return null;
    }
    return this.wrongType(value, 'an unsigned integer', at);
  }

  /** Any number (integer or float token); absent or null → null. */
  num(obj: JsonObject, key: string, path: Path): number | null {
    const value = obj[key];
    if (value === undefined || value === null) return null;
    if (typeof value === 'bigint') return Number(value);
    if (typeof value === 'number') return value;
    return this.wrongType(value, 'a number', [...path, key]);
  }

  str(obj: JsonObject, key: string, path: Path): string | null {
    const value = obj[key];
    if (value === undefined || value === null) return null;
    if (typeof value === 'string') return value;
    return this.wrongType(value, 'a string', [...path, key]);
  }

  obj(obj: JsonObject, key: string, path: Path): JsonObject | null {
    const value = obj[key];
    if (value === undefined || value === null) return null;
    if (isJsonObject(value)) return value;
    return this.wrongType(value, 'an object', [...path, key]);
  }

  /** A request id: integer (exact, bigint) or string. */
  id(obj: JsonObject, key: string, path: Path): bigint | string | null {
    const value = obj[key];
    if (value === undefined || value === null) return null;
    if (typeof value === 'bigint' || typeof value === 'string') return value;
    return this.wrongType(value, 'an integer or a string', [...path, key]);
  }
}

export function describeJson(value: JsonValue): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'bigint') return `the integer ${value}`;
  if (typeof value === 'number') return `the number ${value}`;
  if (typeof value === 'string')
    return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  if (typeof value === 'boolean') return String(value);
  return 'an object';
}

/** Parses `text` and hands back the root object, or null with issues. */
export function parseRootObject(text: string, what: string, issues: WireIssue[]): JsonObject | null {
  const parsed = parseLosslessJson(text);
  issues.push(...parsed.issues);
  if (parsed.value === undefined) return null;
  if (!isJsonObject(parsed.value)) {
    issues.push({
      code: 'wrong-type',
      message: `${what} must be a JSON object, found ${describeJson(parsed.value)}`,
      path: '$',
      offset: 0,
    });
    return null;
  }
  return parsed.value;
}
