// /kv_cache_events texts and expected values shared by the parser's tests (src/core/wire/parse-kv-events*.test.ts).
import { expect } from 'vitest';
import type { KvEvent, StoredBlock } from '../../src/core/wire/kv-event.js';
import { parseKvEvents } from '../../src/core/wire/parse-kv-events.js';

export const tok = (id: number, extra = 0): string =>
  `{"type":"unique_token","token_id":${id},"token_extra_id":${extra}}`;

/** docs/trtllm-wire.md §2.1, compact as Starlette writes it. */
export const DOC_EXAMPLE =
  '[{"event_id":0,"data":{"type":"created","num_blocks_per_cache_level":[8192,0]},"window_size":4096,"attention_dp_rank":0},' +
  '{"event_id":1,"data":{"type":"stored","parent_hash":null,"blocks":[' +
  `{"type":"stored_block","block_hash":924206229973855,"tokens":[${tok(1)},${tok(2)},${tok(3)},${tok(4)}],"cache_level":0,"priority":35,"mm_keys":[],"cache_salt":null},` +
  `{"type":"stored_block","block_hash":6875034662206558884,"tokens":[${tok(5)},${tok(6)}],"cache_level":0,"priority":35,"mm_keys":[],"cache_salt":null}]},` +
  '"window_size":4096,"attention_dp_rank":0},' +
  '{"event_id":2,"data":{"type":"removed","block_hashes":[6875034662206558884]},"window_size":4096,"attention_dp_rank":0},' +
  '{"event_id":3,"data":{"type":"updated","block_hash":924206229973855,' +
  '"cache_level":{"type":"event_diff","new_value":1,"old_value":0},' +
  '"priority":{"type":"event_diff","new_value":35,"old_value":35}},"window_size":4096,"attention_dp_rank":0}]';

export function block(hash: bigint | string, tokens: number[], extra: Partial<StoredBlock> = {}): StoredBlock {
  return {
    blockHash: hash,
    tokens: Uint32Array.from(tokens),
    tokenExtraIds: null,
    cacheLevel: 0,
    priority: 35,
    mmKeys: [],
    cacheSalt: null,
    loraId: null,
    ...extra,
  };
}

export function ok(text: string): KvEvent[] {
  const parsed = parseKvEvents(text);
  expect(parsed.issues).toEqual([]);
  return parsed.events.map((e) => e.event);
}

/** Inserts whitespace after every structural character outside strings: forces the general (non-fast) paths. */
export function spread(text: string): string {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] ?? '';
    out += c;
    if (inString) {
      if (c === '\\') out += text[++i] ?? '';
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === ',' || c === ':' || c === '[' || c === '{') out += ' \n\t';
  }
  return out;
}
