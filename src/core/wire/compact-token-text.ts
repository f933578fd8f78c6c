// TensorRT-LLM's compact spelling of a token in `/kv_cache_events` (`{"type":"unique_token","token_id":N,
// "token_extra_id":0}`, serialized without spaces), as bytes: most of a body is these, so the readers of a body
// recognize the text between two tokens with seven 8-byte loads instead of looking at each of its 55 bytes.
import { KvsentinelError } from '../errors.js';
import { asciiBytes } from './string-table.js';

// lengths as plain numbers: the JIT folds them (a typed array's length is a load each time)
export const PREFIX_LENGTH = 34;
export const BETWEEN_LENGTH = 55;
export const EXTRA_KEY_LENGTH = 18;
export const TOKEN_PREFIX = asciiBytes('{"type":"unique_token","token_id":');
export const TOKEN_EXTRA_KEY = asciiBytes(',"token_extra_id":');
/** between two compact tokens with extra id 0: the first's tail and the next one's prefix */
const TOKEN_BETWEEN = asciiBytes(',"token_extra_id":0},{"type":"unique_token","token_id":');
// TOKEN_BETWEEN as seven overlapping 8-byte words (offsets 0, 8, …, 40 and 47). Compared as float64: no ASCII text
// has a NaN or ±0 bit pattern, so equal values mean equal bytes (and input bytes that happen to form a NaN only
// compare unequal: the caller's general path then reads them).
const BETWEEN_VIEW = new DataView(TOKEN_BETWEEN.buffer);
const BETWEEN_LAST = BETWEEN_LENGTH - 8;
const [W0, W1, W2, W3, W4, W5, W6] = [0, 8, 16, 24, 32, 40, BETWEEN_LAST].map((at) =>
  BETWEEN_VIEW.getFloat64(at, true),
) as [number, number, number, number, number, number, number];

/** Whether the bytes of `v` at `k` are the text between two compact tokens with extra id 0. */
export function isTokenBetween(v: DataView, k: number): boolean {
  return (
    k + BETWEEN_LENGTH <= v.byteLength &&
    v.getFloat64(k, true) === W0 &&
    v.getFloat64(k + 8, true) === W1 &&
    v.getFloat64(k + 16, true) === W2 &&
    v.getFloat64(k + 24, true) === W3 &&
    v.getFloat64(k + 32, true) === W4 &&
    v.getFloat64(k + 40, true) === W5 &&
    v.getFloat64(k + BETWEEN_LAST, true) === W6
  );
}

// the folded lengths above must be the templates'
if (
  TOKEN_PREFIX.length !== PREFIX_LENGTH ||
  TOKEN_BETWEEN.length !== BETWEEN_LENGTH ||
  TOKEN_EXTRA_KEY.length !== EXTRA_KEY_LENGTH
) {
  throw new KvsentinelError('internal', 'compact-token-text: template lengths changed');
}
