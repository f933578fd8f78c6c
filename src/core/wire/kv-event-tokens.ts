// The `tokens` array of a stored block, TensorRT-LLM's biggest field: token ids straight from the bytes into the
// scanner's token arena, through a fast path for the compact spelling and a general path that reports every issue
// precisely.
import type { JsonScanner } from './json-scanner.js';
import {
  BETWEEN_LENGTH,
  EXTRA_KEY_LENGTH,
  PREFIX_LENGTH,
  TOKEN_EXTRA_KEY,
  TOKEN_PREFIX,
  isTokenBetween,
} from './compact-token-text.js';
import { StringTable } from './string-table.js';
import {
  MAX_U32,
  eachMember,
  expectTag,
  missing,
  openArray,
  parseUint,
  type KvEventScanner,
  type TokenArena,
} from './kv-event-scan.js';

const TOKEN_KEYS = new StringTable(['type', 'token_id', 'token_extra_id']);
const UNIQUE_TOKEN = new StringTable(['unique_token']);

/** Whether `bytes` at `k` are `expected` (inlined by the JIT: the token loop's one comparison). */
function matches(bytes: Uint8Array, k: number, expected: Uint8Array): boolean {
  const n = expected.length;
  if (k + n > bytes.length) return false;
  for (let m = 0; m < n; m++) if (bytes[k + m] !== expected[m]) return false;
  return true;
}

/** Decimal digits of a compact token id at `k` (≤ 10, no leading zero); the value, or -1. Leaves the end in s.pos. */
function compactId(s: JsonScanner, k: number): number {
  const b = s.bytes;
  let d = b[k]! - 48;
  if (d === 0) {
    s.pos = k + 1;
    return 0;
  }
  if (!(d > 0 && d <= 9)) return -1;
  let a = d;
  const limit = ++k + 9;
  for (; k < limit; k++) {
    d = b[k]! - 48;
    if (d < 0 || d > 9) break;
    a = a * 10 + d;
  }
  s.pos = k;
  return a <= MAX_U32 ? a : -1;
}

/** General path for one token object (any key order, whitespace, missing type tag): its id; its extra id in t.lastExtra. */
function parseTokenObject(s: JsonScanner, i: number, t: TokenArena): number {
  let id = -1;
  t.lastExtra = 0;
  eachMember(s, i, 'token', TOKEN_KEYS, (key, v) => {
    if (key === 0) expectTag(s, v, UNIQUE_TOKEN, 'token');
    else if (key === 1) id = parseUint(s, v, 'token_id', MAX_U32, 'token-id-out-of-range');
    else t.lastExtra = parseUint(s, v, 'token_extra_id', MAX_U32, 'token-id-out-of-range');
  });
  const end = s.pos;
  if (id < 0) missing(i, 'token_id', 'token');
  s.pos = end;
  return id;
}

export interface BlockTokens {
  readonly ids: Uint32Array;
  /** null when every extra id is 0 (the common case) */
  readonly extraIds: Uint32Array | null;
}

/** Parses a `tokens` array into the token arena; pos after it. */
export function parseTokens(s: KvEventScanner, i: number): BlockTokens {
  const t = s.tokens;
  const b = s.bytes;
  const view = s.view;
  let j = openArray(s, i, 'tokens');
  if (j < 0) return { ids: t.takeIds(), extraIds: null };
  let ids = t.ids;
  let used = t.used;
  let anyExtra = false;
  let primed = false; // the previous token's check already matched this token's prefix
  for (;;) {
    if (used === ids.length) {
      t.used = used;
      t.grow();
      ids = t.ids;
      used = t.used;
    }
    let id = -1;
    let extra = 0;
    // fast path: TensorRT-LLM's exact compact spelling, digits read inline; anything else goes the general way,
    // which also produces the precise issue (leading zeros, fractions, > 2^32-1 all fail the checks here)
    if (primed || (b[j] === 123 && matches(b, j, TOKEN_PREFIX))) {
      primed = false;
      const a = compactId(s, j + PREFIX_LENGTH);
      if (a >= 0) {
        let k = s.pos;
        if (!anyExtra && isTokenBetween(view, k)) {
          // the common case in one comparison: extra id 0, then the next token's prefix
          ids[used++] = a;
          j = k + BETWEEN_LENGTH - PREFIX_LENGTH;
          primed = true;
          continue;
        }
        if (matches(b, k, TOKEN_EXTRA_KEY)) {
          const e = compactId(s, k + EXTRA_KEY_LENGTH);
          k = s.pos;
          if (e >= 0 && b[k] === 125) {
            id = a;
            extra = e;
            j = k + 1;
          }
        }
      }
    }
    if (id < 0) {
      id = parseTokenObject(s, j, t);
      extra = t.lastExtra;
      j = s.pos;
    }
    const index = used - t.start;
    ids[used++] = id;
    if (anyExtra || extra !== 0) {
      while (index >= t.extras.length) t.growExtras();
      if (!anyExtra) t.extras.fill(0, 0, index);
      anyExtra = true;
      t.extras[index] = extra;
    }
    let c = b[j];
    if (c === 44) {
      j++;
      c = b[j];
      if (c === 32 || c === 10 || c === 13 || c === 9) j = s.skipWs(j);
      continue;
    }
    if (c === 32 || c === 10 || c === 13 || c === 9) {
      j = s.skipWs(j);
      c = b[j];
      if (c === 44) {
        j = s.skipWs(j + 1);
        continue;
      }
    }
    if (c === 93) {
      t.used = used;
      s.pos = j + 1;
      const out = t.takeIds();
      return { ids: out, extraIds: anyExtra ? t.extras.slice(0, out.length) : null };
    }
    s.unexpected(j, "',' or ']'");
  }
}
