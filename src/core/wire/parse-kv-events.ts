// The daemon's hot path: a `/kv_cache_events` body (docs/trtllm-wire.md §2, §2.1) → domain events, in one pass over the
// string by char code. No generic JSON tree, one BigInt per hash, token ids straight into a Uint32Array.
// Each item keeps its exact source slice (`raw`), so a relay can re-serve `[` + raws.join(',') + `]` byte for byte.
//
// Decisions:
// - Accepts the wrapped `{"event_id",…,"data":{…}}` form and the flat `{"type":"stored",…}` form; `hash_algo` is read
//   from the item, then from `data`.
// - v2_sha256 hashes must be 64 hex digits; upper-case digits are accepted and normalised to lower case (TensorRT-LLM
//   writes lower case; the raw slice keeps the original spelling).
// - A bad item is skipped with one issue (its first problem) and parsing goes on; broken JSON syntax ends the parse
//   (item boundaries after it are unknowable), keeping every item completed before it.
// - Fields older builds do not write are optional (`mm_keys` → [], `cache_salt` → null, `token_extra_id` → 0,
//   `parent_hash` → null, updated diffs → null, type tags of nested objects); fields every build writes are required.
// - Unknown keys are skipped (newer builds add fields); a repeated known key is an issue ('duplicate-key').
// - A hash's form (decimal u64 or hex string) is taken as written; whether it matches the event's hash_algo is left
//   to the consumer. token_extra_id is held as uint32 (C++ declares it 64-bit; larger values are reported).
// - Strings are strict JSON plus UTF-8 sanity: raw control characters and unpaired surrogates are rejected.
import type { WireIssue } from './wire-issue.js';
import { internalIssue, pathAt, toIssue } from './json-path.js';
import { ScanFailure, excerpt, skipValue, skipWs } from './json-scan.js';
import { cursor, describe } from './kv-event-scan.js';
import { parseItem } from './kv-event-item.js';
import type { KvEvent } from './kv-event.js';

export interface ParsedKvEvent {
  readonly event: KvEvent;
  /**
   * exact source text of the array item. V8 keeps it as a slice of the input, so holding any `raw` keeps the
   * whole body alive: a long-lived buffer of raws should copy them (e.g. through a Buffer) or drop the body soon.
   */
  readonly raw: string;
  /** position of the item in the array */
  readonly index: number;
  /** offset of `raw` in the input */
  readonly offset: number;
}

export interface KvEventsParse {
  readonly events: ParsedKvEvent[];
  readonly issues: WireIssue[];
}

function parseDocument(
  text: string,
  events: ParsedKvEvent[],
  issues: WireIssue[],
  itemIssues: { count: number; readonly max: number },
): void {
  const n = text.length;
  const i = skipWs(text, text.charCodeAt(0) === 0xfeff ? 1 : 0);
  if (i >= n) {
    issues.push({
      code: 'empty-input',
      message: 'the /kv_cache_events body is empty (expected a JSON array)',
      path: '$',
      offset: 0,
    });
    return;
  }
  if (text.charCodeAt(i) !== 91) {
    try {
      skipValue(text, i);
    } catch (e) {
      if (e instanceof ScanFailure) {
        issues.push(toIssue(e, pathAt(text, i, '$', e.offset)));
        return;
      }
      throw e;
    }
    issues.push({
      code: 'not-an-array',
      message: `the body must be a JSON array of events, found ${describe(text, i)} at offset ${i}`,
      path: '$',
      offset: i,
    });
    return;
  }
  let j = skipWs(text, i + 1);
  if (j < n && text.charCodeAt(j) === 93) {
    j++;
  } else {
    for (let index = 0; ; index++) {
      const itemStart = j;
      let end: number;
      try {
        const event = parseItem(text, itemStart);
        end = cursor.pos;
        events.push({ event, raw: text.slice(itemStart, end), index, offset: itemStart });
      } catch (e) {
        if (e instanceof ScanFailure && e.syntax) {
          issues.push(toIssue(e, pathAt(text, 0, '$', e.offset)));
          return;
        }
        if (itemIssues.count < itemIssues.max) {
          issues.push(
            e instanceof ScanFailure
              ? toIssue(e, pathAt(text, itemStart, `$[${index}]`, e.offset))
              : internalIssue(e, itemStart),
          );
        }
        itemIssues.count++;
        try {
          end = skipValue(text, itemStart); // skip the bad item, keep the others
        } catch (s) {
          if (s instanceof ScanFailure) {
            issues.push(toIssue(s, pathAt(text, 0, '$', s.offset)));
            return;
          }
          throw s;
        }
      }
      j = skipWs(text, end);
      const d = text.charCodeAt(j);
      if (d === 44) {
        j = skipWs(text, j + 1);
        continue;
      }
      if (d === 93) {
        j++;
        break;
      }
      if (j >= n) {
        issues.push({
          code: 'truncated-json',
          message: `input ends early at offset ${n} (truncated JSON)`,
          path: '$',
          offset: n,
        });
        return;
      }
      issues.push({
        code: 'invalid-json',
        message: `expected ',' or ']' after item ${index} at offset ${j}, found ${excerpt(text, j)}`,
        path: '$',
        offset: j,
      });
      return;
    }
  }
  const rest = skipWs(text, j);
  if (rest < n) {
    issues.push({
      code: 'trailing-garbage',
      message: `unexpected ${excerpt(text, rest)} at offset ${rest} after the end of the array`,
      path: '$',
      offset: rest,
    });
  }
}

export interface ParseKvEventsOptions {
  /** at most this many bad-item issues are listed (a flood of bad items stays bounded); default 1000 */
  readonly maxItemIssues?: number;
}

/**
 * Parses a `/kv_cache_events` body. Never throws: every problem is an issue with a JSON path and an offset.
 * Beyond `maxItemIssues` bad items, one 'issues-suppressed' issue says how many more were skipped.
 */
export function parseKvEvents(text: string, options: ParseKvEventsOptions = {}): KvEventsParse {
  const events: ParsedKvEvent[] = [];
  const issues: WireIssue[] = [];
  const itemIssues = { count: 0, max: options.maxItemIssues ?? 1000 };
  try {
    parseDocument(text, events, issues, itemIssues);
  } catch (e) {
    issues.push(internalIssue(e, null));
  }
  if (itemIssues.count > itemIssues.max) {
    const more = itemIssues.count - itemIssues.max;
    issues.push({
      code: 'issues-suppressed',
      message: `${more} more bad items were skipped without an issue each`,
      path: '$',
      offset: 0,
    });
  }
  return { events, issues };
}
