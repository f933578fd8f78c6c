// JSON paths for issues (`$[3].data.blocks[0].block_hash`): computed only on the error path, leniently (the input may
// be broken), so the hot parsers never track where they are.
import { JsonScanner } from './json-scanner.js';
import type { ScanFailure } from './scan-failure.js';
import { CharOffsets, utf8Of } from './wire-input.js';
import type { WireIssue } from './wire-issue.js';

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

export function pathKey(path: string, key: string): string {
  return IDENTIFIER.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

interface PathFrame {
  readonly object: boolean;
  key: string | null;
  expectKey: boolean;
  index: number;
}

/** The end of the string at the quote `i` without validation (error path: the input may be broken). */
function lenientStringEnd(s: JsonScanner, i: number): number {
  let j = i + 1;
  while (j < s.length && s.bytes[j] !== 34) j += s.bytes[j] === 92 ? 2 : 1;
  return j;
}

/** The key text of a string at `i` without validation (error path: the input may be broken). */
function lenientKey(s: JsonScanner, i: number): string {
  const raw = s.text(i + 1, Math.min(lenientStringEnd(s, i), s.length));
  if (!raw.includes('\\')) return raw;
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return raw;
  }
}

/**
 * JSON path of the innermost value (or key) at `target`, scanning forward from the value at `start` whose path
 * is `path`. One lenient pass that never throws, so it also works on broken input; only used on the error path,
 * so the hot parser never tracks paths.
 */
export function pathAt(s: JsonScanner, start: number, path: string, target: number): string {
  const stack: PathFrame[] = [];
  const b = s.bytes;
  const end = Math.min(target, s.length);
  let i = start;
  while (i < end) {
    const c = b[i]!;
    const top = stack[stack.length - 1];
    if (c === 34) {
      const j = lenientStringEnd(s, i);
      if (top?.object === true && top.expectKey) {
        if (target <= j) break; // the target is inside this key
        top.key = lenientKey(s, i);
      }
      i = j + 1;
      continue;
    }
    if (c === 123 || c === 91) stack.push({ object: c === 123, key: null, expectKey: c === 123, index: 0 });
    else if (c === 125 || c === 93) stack.pop();
    else if (c === 58 && top?.object === true) top.expectKey = false;
    else if (c === 44 && top !== undefined) {
      if (top.object) {
        top.expectKey = true;
        top.key = null;
      } else {
        top.index++;
      }
    }
    i++;
  }
  let out = path;
  for (let k = 0; k < stack.length; k++) {
    const frame = stack[k];
    if (frame === undefined) break;
    if (!frame.object) {
      out = `${out}[${frame.index}]`;
      continue;
    }
    const atKey = k === stack.length - 1 && frame.expectKey && b[s.skipWs(i)] === 34;
    if (atKey) out = pathKey(out, lenientKey(s, s.skipWs(i)));
    else if (frame.key !== null && !frame.expectKey) out = pathKey(out, frame.key);
  }
  return out;
}

export function toIssue(failure: ScanFailure, path: string): WireIssue {
  return {
    code: failure.code,
    message: failure.message,
    path: failure.field === null ? path : pathKey(path, failure.field),
    offset: failure.offset,
  };
}

export function internalIssue(error: unknown, offset: number | null): WireIssue {
  const detail = error instanceof Error ? error.message : String(error);
  return { code: 'internal', message: `internal parser error (a bug): ${detail}`, path: '$', offset };
}

/** A JSON path as segments: object keys and array indices. */
export type PathSegments = readonly (string | number)[];

export function formatPath(segments: PathSegments): string {
  let path = '$';
  for (const s of segments) path = typeof s === 'number' ? `${path}[${s}]` : pathKey(path, s);
  return path;
}

/** Offset of the value at `segments` in valid JSON `text`, or null when it is absent (error path only). */
export function offsetAt(text: string, segments: PathSegments): number | null {
  const bytes = utf8Of(text);
  const s = new JsonScanner(bytes);
  const b = bytes;
  let i = s.skipWs(b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf ? 3 : 0);
  try {
    for (const seg of segments) {
      const c = b[i];
      let j = s.skipWs(i + 1);
      let found = -1;
      if (c === 123 && typeof seg === 'string') {
        while (b[j] === 34) {
          const key = s.readMemberKey(j);
          const v = s.pos;
          if (key === seg) found = v; // last one wins, like the parser
          j = s.skipWs(s.skipValue(v));
          if (b[j] !== 44) break;
          j = s.skipWs(j + 1);
        }
      } else if (c === 91 && typeof seg === 'number') {
        for (let index = 0; b[j] !== 93; index++) {
          if (index === seg) {
            found = j;
            break;
          }
          j = s.skipWs(s.skipValue(j));
          if (b[j] !== 44) break;
          j = s.skipWs(j + 1);
        }
      }
      if (found < 0) return null;
      i = found;
    }
    return new CharOffsets(bytes, text).of(i);
  } catch {
    return null;
  }
}
