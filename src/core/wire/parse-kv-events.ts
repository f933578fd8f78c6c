// The daemon's hot path: a `/kv_cache_events` body (docs/trtllm-wire.md §2, §2.1) → domain events, in one pass over
// its bytes (no decode of the body to a string). No generic JSON tree, one BigInt per hash, token ids straight into one
// Uint32Array per body. Each item keeps its exact source span (`raw`, decoded when asked), so a relay can re-serve
// `[` + raws.join(',') + `]` byte for byte.
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
import { ScanFailure } from './scan-failure.js';
import { KvEventScanner } from './kv-event-scan.js';
import { parseItem } from './kv-event-item.js';
import type { KvEvent } from './kv-event.js';
import { CharOffsets, issuesInText, utf8Of } from './wire-input.js';

const UTF8 = new TextDecoder();

/** One parsed item; its source text is decoded only when asked (the relay forwards the bytes it split itself). */
export class ParsedKvEvent {
  readonly event: KvEvent;
  /** position of the item in the array */
  readonly index: number;
  /** offset of the item in the input (bytes, or UTF-16 units of a string input) */
  readonly offset: number;
  readonly #source: Uint8Array;

  constructor(event: KvEvent, index: number, offset: number, source: Uint8Array) {
    this.event = event;
    this.index = index;
    this.offset = offset;
    this.#source = source;
  }

  /** exact source text of the array item (a view of the input's bytes until decoded: holding it keeps them alive) */
  get raw(): string {
    return UTF8.decode(this.#source);
  }
}

export interface KvEventsParse {
  readonly events: ParsedKvEvent[];
  readonly issues: WireIssue[];
}

function parseDocument(
  s: KvEventScanner,
  events: ParsedKvEvent[],
  issues: WireIssue[],
  itemIssues: { count: number; readonly max: number },
  chars: CharOffsets | null,
): void {
  const b = s.bytes;
  const n = s.length;
  const bom = b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf ? 3 : 0;
  const i = s.skipWs(bom);
  if (i >= n) {
    issues.push({
      code: 'empty-input',
      message: 'the /kv_cache_events body is empty (expected a JSON array)',
      path: '$',
      offset: 0,
    });
    return;
  }
  if (b[i] !== 91) {
    try {
      s.skipValue(i);
    } catch (e) {
      if (e instanceof ScanFailure) {
        issues.push(toIssue(e, pathAt(s, i, '$', e.offset)));
        return;
      }
      throw e;
    }
    issues.push({
      code: 'not-an-array',
      message: `the body must be a JSON array of events, found ${s.describe(i)} at offset ${i}`,
      path: '$',
      offset: i,
    });
    return;
  }
  let j = s.skipWs(i + 1);
  if (j < n && b[j] === 93) {
    j++;
  } else {
    for (let index = 0; ; index++) {
      const itemStart = j;
      let end: number;
      try {
        const event = parseItem(s, itemStart);
        end = s.pos;
        const offset = chars === null ? itemStart : chars.of(itemStart);
        events.push(new ParsedKvEvent(event, index, offset, b.subarray(itemStart, end)));
      } catch (e) {
        if (e instanceof ScanFailure && e.syntax) {
          issues.push(toIssue(e, pathAt(s, 0, '$', e.offset)));
          return;
        }
        if (itemIssues.count < itemIssues.max) {
          issues.push(
            e instanceof ScanFailure
              ? toIssue(e, pathAt(s, itemStart, `$[${index}]`, e.offset))
              : internalIssue(e, itemStart),
          );
        }
        itemIssues.count++;
        try {
          s.lenientUtf8 = true; // an item rejected for bytes that are not UTF-8 is skipped over them
          end = s.skipValue(itemStart); // skip the bad item, keep the others
        } catch (f) {
          if (f instanceof ScanFailure) {
            issues.push(toIssue(f, pathAt(s, 0, '$', f.offset)));
            return;
          }
          throw f;
        } finally {
          s.lenientUtf8 = false;
        }
      }
      j = s.skipWs(end);
      const d = b[j];
      if (d === 44) {
        j = s.skipWs(j + 1);
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
        message: `expected ',' or ']' after item ${index} at offset ${j}, found ${s.excerpt(j)}`,
        path: '$',
        offset: j,
      });
      return;
    }
  }
  const rest = s.skipWs(j);
  if (rest < n) {
    issues.push({
      code: 'trailing-garbage',
      message: `unexpected ${s.excerpt(rest)} at offset ${rest} after the end of the array`,
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
 * Parses a `/kv_cache_events` body: its bytes as received, or a string (offsets then in the string's units).
 * Never throws: every problem is an issue with a JSON path and an offset.
 * Beyond `maxItemIssues` bad items, one 'issues-suppressed' issue says how many more were skipped.
 */
export function parseKvEvents(input: Uint8Array | string, options: ParseKvEventsOptions = {}): KvEventsParse {
  const bytes = typeof input === 'string' ? utf8Of(input) : input;
  const chars = typeof input === 'string' && bytes.length !== input.length ? new CharOffsets(bytes, input) : null;
  const events: ParsedKvEvent[] = [];
  let issues: WireIssue[] = [];
  const itemIssues = { count: 0, max: options.maxItemIssues ?? 1000 };
  try {
    parseDocument(new KvEventScanner(bytes), events, issues, itemIssues, chars);
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
  if (typeof input === 'string') issues = issuesInText(issues, bytes, input);
  return { events, issues };
}
