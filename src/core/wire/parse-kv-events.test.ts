import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parseKvEvents } from './parse-kv-events.js';
import { serializeKvEvent, serializeKvEvents } from './serialize-kv-events.js';
import type { KvEvent, StoredBlock } from './kv-event.js';
import { kvEventArb } from '../../../test/helpers/kv-event-arbitraries.js';
import { WIRE_ISSUE_CODES } from './wire-issue-codes.js';

const U64_MAX = 18446744073709551615n;

const tok = (id: number, extra = 0): string => `{"type":"unique_token","token_id":${id},"token_extra_id":${extra}}`;

/** docs/trtllm-wire.md §2.1, compact as Starlette writes it. */
const DOC_EXAMPLE =
  '[{"event_id":0,"data":{"type":"created","num_blocks_per_cache_level":[8192,0]},"window_size":4096,"attention_dp_rank":0},' +
  '{"event_id":1,"data":{"type":"stored","parent_hash":null,"blocks":[' +
  `{"type":"stored_block","block_hash":924206229973855,"tokens":[${tok(1)},${tok(2)},${tok(3)},${tok(4)}],"cache_level":0,"priority":35,"mm_keys":[],"cache_salt":null},` +
  `{"type":"stored_block","block_hash":6875034662206558884,"tokens":[${tok(5)},${tok(6)}],"cache_level":0,"priority":35,"mm_keys":[],"cache_salt":null}]},` +
  '"window_size":4096,"attention_dp_rank":0},' +
  '{"event_id":2,"data":{"type":"removed","block_hashes":[6875034662206558884]},"window_size":4096,"attention_dp_rank":0},' +
  '{"event_id":3,"data":{"type":"updated","block_hash":924206229973855,' +
  '"cache_level":{"type":"event_diff","new_value":1,"old_value":0},' +
  '"priority":{"type":"event_diff","new_value":35,"old_value":35}},"window_size":4096,"attention_dp_rank":0}]';

function block(hash: bigint | string, tokens: number[], extra: Partial<StoredBlock> = {}): StoredBlock {
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

function ok(text: string): KvEvent[] {
  const parsed = parseKvEvents(text);
  expect(parsed.issues).toEqual([]);
  return parsed.events.map((e) => e.event);
}

/** Inserts whitespace after every structural character outside strings: forces the general (non-fast) paths. */
function spread(text: string): string {
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

describe('parseKvEvents: wrapped form', () => {
  it('parses the documented example exactly, u64 hashes included', () => {
    const events = ok(DOC_EXAMPLE);
    expect(events).toEqual([
      {
        eventId: 0,
        data: { type: 'created', numBlocksPerCacheLevel: [8192, 0] },
        windowSize: 4096,
        attentionDpRank: 0,
        hashAlgo: null,
        layerGroupId: null,
      },
      {
        eventId: 1,
        data: {
          type: 'stored',
          parentHash: null,
          blocks: [block(924206229973855n, [1, 2, 3, 4]), block(6875034662206558884n, [5, 6])],
        },
        windowSize: 4096,
        attentionDpRank: 0,
        hashAlgo: null,
        layerGroupId: null,
      },
      {
        eventId: 2,
        data: { type: 'removed', blockHashes: [6875034662206558884n] },
        windowSize: 4096,
        attentionDpRank: 0,
        hashAlgo: null,
        layerGroupId: null,
      },
      {
        eventId: 3,
        data: {
          type: 'updated',
          blockHash: 924206229973855n,
          cacheLevel: { newValue: 1, oldValue: 0 },
          priority: { newValue: 35, oldValue: 35 },
        },
        windowSize: 4096,
        attentionDpRank: 0,
        hashAlgo: null,
        layerGroupId: null,
      },
    ]);
  });

  it('serializes the documented example back to the identical bytes', () => {
    expect(serializeKvEvents(ok(DOC_EXAMPLE))).toBe(DOC_EXAMPLE);
  });

  it('keeps every item raw slice byte-identical, so a relay can re-serve the array', () => {
    const parsed = parseKvEvents(DOC_EXAMPLE);
    expect(`[${parsed.events.map((e) => e.raw).join(',')}]`).toBe(DOC_EXAMPLE);
    expect(parsed.events.map((e) => e.index)).toEqual([0, 1, 2, 3]);
    for (const e of parsed.events) expect(DOC_EXAMPLE.slice(e.offset, e.offset + e.raw.length)).toBe(e.raw);
  });

  it('round-trips block_hash 2^64-1 exactly: parse → serialize → parse, raw untouched', () => {
    const text =
      '[{"event_id":7,"data":{"type":"stored","parent_hash":18446744073709551614,"blocks":[' +
      `{"type":"stored_block","block_hash":18446744073709551615,"tokens":[${tok(9)}],"cache_level":0,"priority":35,"mm_keys":[],"cache_salt":null}]},` +
      '"window_size":4096}]';
    const first = parseKvEvents(text);
    expect(first.issues).toEqual([]);
    const data = first.events[0]?.event.data;
    expect(data?.type === 'stored' && data.blocks[0]?.blockHash).toBe(U64_MAX);
    expect(data?.type === 'stored' && data.parentHash).toBe(U64_MAX - 1n);
    expect(first.events[0]?.raw).toBe(text.slice(1, -1));
    const again = serializeKvEvents(first.events.map((e) => e.event));
    expect(again).toBe(text);
    expect(parseKvEvents(again).events.map((e) => e.event)).toEqual(first.events.map((e) => e.event));
  });

  it('reads V2-manager fields: hash_algo, layer_group_id, hex hashes, salts, mm keys, extra ids, lora_id', () => {
    const hex = 'e432228522a304ab556d66e6e40979ad05575f28b19b554264dd3c6277aaf073';
    const text =
      `[{"event_id":4,"data":{"type":"stored","parent_hash":"${hex.toUpperCase()}","blocks":[` +
      `{"type":"stored_block","block_hash":"${hex}","tokens":[${tok(1, 7)},${tok(2)}],"cache_level":1,"priority":null,` +
      `"mm_keys":[{"type":"mm_key","hash":"abc","start_offset":3}],"cache_salt":"tenant-\\"A\\"\\u00e9","lora_id":123}]},` +
      '"window_size":128,"attention_dp_rank":2,"hash_algo":"v2_sha256","layer_group_id":1}]';
    expect(ok(text)).toEqual([
      {
        eventId: 4,
        data: {
          type: 'stored',
          parentHash: hex,
          blocks: [
            block(hex, [1, 2], {
              tokenExtraIds: Uint32Array.from([7, 0]),
              cacheLevel: 1,
              priority: null,
              mmKeys: [{ hash: 'abc', startOffset: 3 }],
              cacheSalt: 'tenant-"A"é',
              loraId: 123n,
            }),
          ],
        },
        windowSize: 128,
        attentionDpRank: 2,
        hashAlgo: 'v2_sha256',
        layerGroupId: 1,
      },
    ]);
  });

  it('accepts older blocks without mm_keys / cache_salt and updated events with null diffs', () => {
    const text =
      `[{"event_id":1,"data":{"type":"stored","parent_hash":5,"blocks":[{"type":"stored_block","block_hash":6,"tokens":[${tok(1)}],"cache_level":0,"priority":35}]},"window_size":32},` +
      '{"event_id":2,"data":{"type":"updated","block_hash":6,"cache_level":{"type":"event_diff","new_value":1,"old_value":0},"priority":null},"window_size":32},' +
      '{"event_id":3,"data":{"type":"all_cleared"},"window_size":32}]';
    const events = ok(text);
    expect(events[0]?.data).toEqual({ type: 'stored', parentHash: 5n, blocks: [block(6n, [1])] });
    expect(events[1]?.data).toEqual({ type: 'updated', blockHash: 6n, cacheLevel: { newValue: 1, oldValue: 0 }, priority: null });
    expect(events[2]?.data).toEqual({ type: 'all_cleared' });
  });

  it('reads hash_algo from data when the item does not state it; the item wins otherwise', () => {
    const [a, b] = ok(
      '[{"event_id":0,"data":{"type":"removed","block_hashes":[1],"hash_algo":"v2_sha256_64"},"window_size":1},' +
        '{"event_id":1,"hash_algo":"v1_block_key","data":{"type":"removed","block_hashes":[1],"hash_algo":"v2_sha256_64"},"window_size":1}]',
    );
    expect(a?.hashAlgo).toBe('v2_sha256_64');
    expect(b?.hashAlgo).toBe('v1_block_key');
  });

  it('parses whitespace, reordered keys and untagged nested objects the same as the compact form', () => {
    expect(ok(spread(DOC_EXAMPLE))).toEqual(ok(DOC_EXAMPLE));
    const reordered =
      '[{"data":{"blocks":[{"tokens":[{"token_id":1},{"token_extra_id":0,"token_id":2}],"block_hash":9,"priority":35,"cache_level":0}],"parent_hash":null,"type":"stored"},"event_id":1,"window_size":4096}]';
    expect(ok(reordered)[0]?.data).toEqual({ type: 'stored', parentHash: null, blocks: [block(9n, [1, 2])] });
  });
});

describe('parseKvEvents: flat form', () => {
  const cases: [string, string, KvEvent['data']][] = [
    ['created', '{"type":"created","num_blocks_per_cache_level":[10,2]}', { type: 'created', numBlocksPerCacheLevel: [10, 2] }],
    [
      'stored',
      `{"type":"stored","parent_hash":null,"blocks":[{"type":"stored_block","block_hash":18446744073709551615,"tokens":[${tok(3)}],"cache_level":0,"priority":35}]}`,
      { type: 'stored', parentHash: null, blocks: [block(U64_MAX, [3])] },
    ],
    ['removed', '{"type":"removed","block_hashes":[1,18446744073709551615]}', { type: 'removed', blockHashes: [1n, U64_MAX] }],
    [
      'updated',
      '{"type":"updated","block_hash":3,"cache_level":null,"priority":{"type":"event_diff","new_value":null,"old_value":35}}',
      { type: 'updated', blockHash: 3n, cacheLevel: null, priority: { newValue: null, oldValue: 35 } },
    ],
    ['all_cleared', '{"type":"all_cleared"}', { type: 'all_cleared' }],
  ];
  for (const [name, item, data] of cases) {
    it(`parses a flat ${name} item, and the wrapped one the same`, () => {
      expect(ok(`[${item}]`)).toEqual([
        { eventId: null, data, windowSize: null, attentionDpRank: null, hashAlgo: null, layerGroupId: null },
      ]);
      expect(ok(`[{"event_id":5,"data":${item},"window_size":64}]`)[0]?.data).toEqual(data);
    });
  }

  it('takes event-level fields from a flat item too', () => {
    const [e] = ok('[{"type":"removed","block_hashes":[2],"event_id":9,"attention_dp_rank":1,"hash_algo":"v2_sha256_64"}]');
    expect(e).toEqual({
      eventId: 9,
      data: { type: 'removed', blockHashes: [2n] },
      windowSize: null,
      attentionDpRank: 1,
      hashAlgo: 'v2_sha256_64',
      layerGroupId: null,
    });
  });
});

describe('parseKvEvents: malformed input', () => {
  const wrap = (data: string, extra = ''): string => `[{"event_id":0,"data":${data},"window_size":4096${extra}}]`;
  const storedWith = (blockJson: string): string => wrap(`{"type":"stored","parent_hash":null,"blocks":[${blockJson}]}`);
  const goodBlock = (over: Record<string, string>): string => {
    const fields: Record<string, string> = {
      type: '"stored_block"',
      block_hash: '1',
      tokens: `[${tok(1)}]`,
      cache_level: '0',
      priority: '35',
      mm_keys: '[]',
      cache_salt: 'null',
      ...over,
    };
    return `{${Object.entries(fields)
      .filter(([, v]) => v !== '')
      .map(([k, v]) => `"${k}":${v}`)
      .join(',')}}`;
  };

  const cases: { name: string; text: string; code: string; path: string; kept?: number }[] = [
    { name: 'hash with a fraction', text: wrap('{"type":"removed","block_hashes":[1.5]}'), code: 'hash-float', path: '$[0].data.block_hashes[0]' },
    { name: 'hash written 1.0', text: storedWith(goodBlock({ block_hash: '1.0' })), code: 'hash-float', path: '$[0].data.blocks[0].block_hash' },
    { name: 'hash in exponent form', text: wrap('{"type":"removed","block_hashes":[1e19]}'), code: 'hash-exponent', path: '$[0].data.block_hashes[0]' },
    { name: 'negative hash', text: wrap('{"type":"updated","block_hash":-5,"cache_level":null,"priority":null}'), code: 'hash-negative', path: '$[0].data.block_hash' },
    {
      name: 'hash above 2^64-1',
      text: storedWith(goodBlock({ block_hash: '18446744073709551616' })),
      code: 'hash-out-of-range',
      path: '$[0].data.blocks[0].block_hash',
    },
    { name: '21-digit hash', text: wrap('{"type":"removed","block_hashes":[100000000000000000000]}'), code: 'hash-out-of-range', path: '$[0].data.block_hashes[0]' },
    { name: 'hex hash of the wrong length', text: wrap('{"type":"removed","block_hashes":["abcd"]}'), code: 'invalid-hash-string', path: '$[0].data.block_hashes[0]' },
    { name: 'missing block_hash', text: storedWith(goodBlock({ block_hash: '' })), code: 'missing-field', path: '$[0].data.blocks[0].block_hash' },
    { name: 'missing data', text: '[{"event_id":0,"window_size":1}]', code: 'missing-field', path: '$[0].data' },
    { name: 'missing event type', text: wrap('{"block_hashes":[1]}'), code: 'missing-field', path: '$[0].data.type' },
    { name: 'window_size as a string', text: wrap('{"type":"all_cleared"}').replace('4096', '"4096"'), code: 'wrong-type', path: '$[0].window_size' },
    { name: 'tokens not an array', text: storedWith(goodBlock({ tokens: '{}' })), code: 'wrong-type', path: '$[0].data.blocks[0].tokens' },
    { name: 'unknown event type', text: wrap('{"type":"evicted","block_hashes":[1]}'), code: 'unknown-event-type', path: '$[0].data.type' },
    { name: 'unknown hash_algo', text: wrap('{"type":"all_cleared"}', ',"hash_algo":"md5"'), code: 'unknown-hash-algo', path: '$[0].hash_algo' },
    { name: 'wrong token tag', text: storedWith(goodBlock({ tokens: '[{"type":"mm_token","token_id":1}]' })), code: 'wrong-type-tag', path: '$[0].data.blocks[0].tokens[0].type' },
    {
      name: 'token id beyond uint32',
      text: storedWith(goodBlock({ tokens: `[${tok(1)},${tok(4294967296)}]` })),
      code: 'token-id-out-of-range',
      path: '$[0].data.blocks[0].tokens[1].token_id',
    },
    { name: 'negative token id', text: storedWith(goodBlock({ tokens: `[${tok(-1)}]` })), code: 'token-id-out-of-range', path: '$[0].data.blocks[0].tokens[0].token_id' },
    { name: 'non-integer event_id', text: '[{"event_id":1.5,"data":{"type":"all_cleared"}}]', code: 'not-an-integer', path: '$[0].event_id' },
    { name: 'duplicate key', text: wrap('{"type":"removed","block_hashes":[1],"block_hashes":[2]}'), code: 'duplicate-key', path: '$[0].data.block_hashes' },
    { name: 'top level not an array', text: '{"event_id":0}', code: 'not-an-array', path: '$' },
    { name: 'empty body', text: '  ', code: 'empty-input', path: '$' },
    { name: 'truncated JSON', text: DOC_EXAMPLE.slice(0, 200), code: 'truncated-json', path: '$[1].data.blocks[0].type', kept: 1 },
    { name: 'trailing garbage', text: `${DOC_EXAMPLE} x`, code: 'trailing-garbage', path: '$', kept: 4 },
    { name: 'trailing comma', text: '[{"type":"all_cleared"},]', code: 'invalid-json', path: '$[1]', kept: 1 },
    { name: 'leading zero', text: wrap('{"type":"removed","block_hashes":[01]}'), code: 'invalid-number', path: '$[0].data.block_hashes[0]' },
    { name: 'raw control character in a string', text: storedWith(goodBlock({ cache_salt: '"a\u0001b"' })), code: 'control-character', path: '$[0].data.blocks[0].cache_salt' },
    { name: 'invalid escape', text: storedWith(goodBlock({ cache_salt: '"a\\xb"' })), code: 'invalid-escape', path: '$[0].data.blocks[0].cache_salt' },
    { name: 'unpaired surrogate', text: storedWith(goodBlock({ cache_salt: '"a\ud800b"' })), code: 'invalid-unicode', path: '$[0].data.blocks[0].cache_salt' },
    { name: 'escaped unpaired surrogate', text: storedWith(goodBlock({ cache_salt: '"\\udc00"' })), code: 'invalid-unicode', path: '$[0].data.blocks[0].cache_salt' },
    { name: 'bare word', text: '[nul]', code: 'invalid-json', path: '$[0]' },
  ];
  for (const c of cases) {
    it(`reports ${c.code} for ${c.name}`, () => {
      const parsed = parseKvEvents(c.text);
      expect(parsed.events).toHaveLength(c.kept ?? 0);
      expect(parsed.issues.map((i) => [i.code, i.path])).toEqual([[c.code, c.path]]);
      const issue = parsed.issues[0];
      expect(issue?.offset).toBeTypeOf('number');
      expect(issue?.message.length).toBeGreaterThan(10);
    });
  }

  it('points the offset at the offending value', () => {
    const text = wrap('{"type":"removed","block_hashes":[2,1e19]}');
    const [issue] = parseKvEvents(text).issues;
    expect(text.slice(issue?.offset ?? 0, (issue?.offset ?? 0) + 4)).toBe('1e19');
    const truncatedIssue = parseKvEvents(DOC_EXAMPLE.slice(0, 321)).issues[0];
    expect(truncatedIssue).toMatchObject({ code: 'truncated-json', offset: 321 });
  });

  it('keeps the valid items beside a bad one', () => {
    const good = '{"event_id":1,"data":{"type":"removed","block_hashes":[18446744073709551615]},"window_size":1}';
    const bad = '{"event_id":2,"data":{"type":"removed","block_hashes":[1.5]},"window_size":1}';
    const worse = '{"event_id":3,"data":{"type":"nope"}}';
    const text = `[${good},${bad},${good},${worse},7,${good}]`;
    const parsed = parseKvEvents(text);
    expect(parsed.events.map((e) => [e.index, e.raw])).toEqual([
      [0, good],
      [2, good],
      [5, good],
    ]);
    expect(parsed.issues.map((i) => [i.code, i.path])).toEqual([
      ['hash-float', '$[1].data.block_hashes[0]'],
      ['unknown-event-type', '$[3].data.type'],
      ['wrong-type', '$[4]'],
    ]);
  });

  it('keeps the items completed before a truncation, and only those', () => {
    const full = parseKvEvents(DOC_EXAMPLE).events;
    const cut = DOC_EXAMPLE.indexOf('{"event_id":2') + 20;
    const parsed = parseKvEvents(DOC_EXAMPLE.slice(0, cut));
    expect(parsed.events).toEqual(full.slice(0, 2));
    expect(parsed.issues).toEqual([expect.objectContaining({ code: 'truncated-json', offset: cut })]);
  });
});

describe('parseKvEvents: properties', () => {
  it('parse(serialize(events)) returns the events, each raw being its serialized item', () => {
    fc.assert(
      fc.property(fc.array(kvEventArb, { maxLength: 6 }), (events) => {
        const text = serializeKvEvents(events);
        const parsed = parseKvEvents(text);
        expect(parsed.issues).toEqual([]);
        expect(parsed.events.map((e) => e.event)).toEqual(events);
        expect(parsed.events.map((e) => e.raw)).toEqual(events.map(serializeKvEvent));
      }),
      { numRuns: 300 },
    );
  });

  it('the general path agrees with the fast path (whitespace everywhere)', () => {
    fc.assert(
      fc.property(fc.array(kvEventArb, { maxLength: 4 }), (events) => {
        const parsed = parseKvEvents(spread(serializeKvEvents(events)));
        expect(parsed.issues).toEqual([]);
        expect(parsed.events.map((e) => e.event)).toEqual(events);
      }),
      { numRuns: 150 },
    );
  });

  /** Never throws; every issue is typed and located (checked without an expect per issue: this runs ~10^3 times). */
  function wellFormed(text: string): void {
    let parsed: ReturnType<typeof parseKvEvents> | undefined;
    expect(() => (parsed = parseKvEvents(text))).not.toThrow();
    const bad = (parsed?.issues ?? []).filter(
      (issue) =>
        issue.code === 'internal' ||
        !issue.path.startsWith('$') ||
        typeof issue.offset !== 'number' ||
        issue.offset < 0 ||
        issue.offset > text.length ||
        issue.message.length === 0,
    );
    expect(bad).toEqual([]);
  }

  it('never throws on arbitrary strings, and every issue has a path and an offset', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 80 }), wellFormed), { numRuns: 300 });
    fc.assert(fc.property(fc.json({ maxDepth: 2 }), wellFormed), { numRuns: 60 });
  });

  it('survives truncation at every offset: keeps a prefix of the items and reports where it stopped', () => {
    const full = parseKvEvents(DOC_EXAMPLE).events;
    for (let cut = 0; cut < DOC_EXAMPLE.length; cut++) {
      const text = DOC_EXAMPLE.slice(0, cut);
      const parsed = parseKvEvents(text);
      wellFormed(text);
      expect(parsed.events).toEqual(full.slice(0, parsed.events.length));
      expect(parsed.issues).toHaveLength(1);
      expect(['truncated-json', 'empty-input']).toContain(parsed.issues[0]?.code);
    }
  });

  it('never throws on random character flips of valid payloads', () => {
    const chars = fc.constantFrom(...'{}[]",:0123456789.-eE \\nula\u0000\ud800é');
    fc.assert(
      fc.property(
        fc.array(kvEventArb, { minLength: 1, maxLength: 3 }),
        fc.array(fc.tuple(fc.nat(), chars), { minLength: 1, maxLength: 4 }),
        (events, flips) => {
          let text = serializeKvEvents(events);
          for (const [at, c] of flips) {
            const k = at % text.length;
            text = text.slice(0, k) + c + text.slice(k + 1);
          }
          wellFormed(text);
        },
      ),
      { numRuns: 400 },
    );
  });
});

describe('parseKvEvents: hostile input', () => {
  it('reports deep nesting as an issue instead of overflowing the stack', () => {
    const deep = `[{"event_id":0,"x":${'['.repeat(100_000)}`;
    const parsed = parseKvEvents(deep);
    expect(parsed.issues.map((i) => i.code)).toEqual(['too-deep']);
    const fine = parseKvEvents(`[{"data":{"type":"all_cleared"},"x":${'['.repeat(50)}${']'.repeat(50)}}]`);
    expect(fine.issues).toEqual([]);
  });

  it('turns even a non-string argument from untyped callers into an internal issue', () => {
    const parsed = parseKvEvents(undefined as unknown as string);
    expect(parsed.events).toEqual([]);
    expect(parsed.issues.map((i) => i.code)).toEqual(['internal']);
  });

  it('every emitted code is catalogued', () => {
    const texts = ['', '{}', '[1]', '[{"type":"x"}]', '[', '[]x', '[01]', '["\\q"]', '[{"event_id":1.5}]'];
    for (const text of texts) for (const issue of parseKvEvents(text).issues) expect(Object.keys(WIRE_ISSUE_CODES)).toContain(issue.code);
  });
});

describe('parseKvEvents: hash digits', () => {
  it('reads every digit count and the 2^32 / 2^53 / 2^64 boundaries exactly', () => {
    const values = [
      '0',
      '7',
      '4294967295',
      '4294967296',
      '9007199254740991',
      '9007199254740993',
      '999999999999999',
      '1000000000000000',
      '99999999999999999999'.slice(0, 19),
      '18446744073709551615',
      '18446744073709551614',
      '10000000000000000000',
      ...Array.from({ length: 20 }, (_, n) => '9'.repeat(n + 1)).filter((s) => BigInt(s) <= 18446744073709551615n),
    ];
    const text = `[{"type":"removed","block_hashes":[${values.join(',')}]}]`;
    const [event] = ok(text);
    expect(event?.data).toEqual({ type: 'removed', blockHashes: values.map((v) => BigInt(v)) });
  });

  it('property: any u64 written in decimal comes back exact', () => {
    fc.assert(
      fc.property(fc.array(fc.bigInt({ min: 0n, max: 18446744073709551615n }), { minLength: 1, maxLength: 20 }), (hashes) => {
        const [event] = ok(`[{"type":"removed","block_hashes":[${hashes.join(',')}]}]`);
        expect(event?.data).toEqual({ type: 'removed', blockHashes: hashes });
      }),
      { numRuns: 300 },
    );
  });
});

describe('parseKvEvents: large blocks', () => {
  it('grows the token scratch past its initial size, extra ids included, and keeps blocks independent', () => {
    const ids = Array.from({ length: 5000 }, (_, k) => (k * 2654435761) >>> 0);
    const extras = ids.map((_, k) => (k === 4999 ? 3 : 0));
    const big = { ...block(1n, []), tokens: Uint32Array.from(ids), tokenExtraIds: Uint32Array.from(extras) };
    const small = block(2n, [1, 2, 3]);
    const events: KvEvent[] = [
      { eventId: 0, data: { type: 'stored', parentHash: null, blocks: [big, small] }, windowSize: 1, attentionDpRank: null, hashAlgo: null, layerGroupId: null },
    ];
    const text = serializeKvEvents(events);
    expect(ok(text)).toEqual(events);
    expect(ok(spread(text))).toEqual(events);
  });
});

describe('parseKvEvents: issue flood', () => {
  it('lists at most maxItemIssues bad items and counts the rest', () => {
    const bad = '{"type":"removed","block_hashes":[-1]}';
    const good = '{"type":"all_cleared"}';
    const text = `[${Array.from({ length: 10 }, () => bad).join(',')},${good}]`;
    const parsed = parseKvEvents(text, { maxItemIssues: 3 });
    expect(parsed.events.map((e) => e.index)).toEqual([10]);
    expect(parsed.issues.map((i) => i.code)).toEqual(['hash-negative', 'hash-negative', 'hash-negative', 'issues-suppressed']);
    expect(parsed.issues[3]?.message).toContain('7 more');
    expect(parseKvEvents(text).issues).toHaveLength(10);
  });
});

describe('parseKvEvents: token runs (bulk path and its hand-over to the per-token path)', () => {
  const storedTokens = (tokens: string): string =>
    `[{"event_id":0,"data":{"type":"stored","parent_hash":null,"blocks":[{"type":"stored_block","block_hash":1,"tokens":${tokens},"cache_level":0,"priority":35}]}}]`;
  const piece = fc.oneof(
    fc.nat({ max: 0xffff_ffff }).map((id) => ({ text: tok(id), id, extra: 0 })),
    fc.constantFrom(0, 0xffff_ffff).map((id) => ({ text: tok(id), id, extra: 0 })),
    fc.tuple(fc.nat({ max: 1000 }), fc.integer({ min: 1, max: 9 })).map(([id, extra]) => ({ text: tok(id, extra), id, extra })),
    fc.nat({ max: 1000 }).map((id) => ({ text: `{"token_id":${id},"type":"unique_token"}`, id, extra: 0 })),
    fc.nat({ max: 1000 }).map((id) => ({ text: `{ "type":"unique_token","token_id":${id},"token_extra_id":0}`, id, extra: 0 })),
  );

  it('reads any mix of compact and other spellings, separators included, like JSON.parse', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(piece, fc.constantFrom(',', ', ', ' ,\n')), { maxLength: 40 }), fc.constantFrom('', ' '), (items, pad) => {
        const body = items.map(([p], i) => (i === 0 ? '' : items[i - 1]![1]) + p.text).join('');
        const [event] = ok(storedTokens(`[${pad}${body}${pad}]`));
        const b = event!.data.type === 'stored' ? event!.data.blocks[0]! : null;
        expect(Array.from(b!.tokens)).toEqual(items.map(([p]) => p.id));
        const extras = items.map(([p]) => p.extra);
        expect(b!.tokenExtraIds === null ? extras.map(() => 0) : Array.from(b!.tokenExtraIds)).toEqual(extras);
        expect(b!.tokenExtraIds === null).toBe(extras.every((x) => x === 0));
      }),
      { numRuns: 300 },
    );
  });

  it.each([
    ['an id beyond uint32 after a compact run', `[${tok(1)},${tok(2)},${tok(4294967296)},${tok(3)}]`, 'token-id-out-of-range', 'tokens[2].token_id', '4294967296'],
    ['a ten-digit id beyond uint32 in the first token', `[${tok(9999999999)}]`, 'token-id-out-of-range', 'tokens[0].token_id', '9999999999'],
    ['a leading zero after a compact run', `[${tok(1)},{"type":"unique_token","token_id":01,"token_extra_id":0}]`, 'invalid-number', 'tokens[1].token_id', '01'],
    ['a trailing comma after a compact run', `[${tok(1)},${tok(2)},]`, 'invalid-json', 'tokens[2]', ']'],
    ['a missing comma inside a compact run', `[${tok(1)}${tok(2)}]`, 'invalid-json', 'tokens[0]', '{'],
  ])('reports %s with the per-token code, path and offset', (_name, tokens, code, pathTail, at) => {
    const text = storedTokens(tokens);
    const parsed = parseKvEvents(text);
    expect(parsed.events).toHaveLength(0);
    expect(parsed.issues.map((i) => [i.code, i.path])).toEqual([[code, `$[0].data.blocks[0].${pathTail}`]]);
    expect(text.slice(parsed.issues[0]!.offset ?? 0).startsWith(at)).toBe(true);
  });

  it('keeps the items before a run truncated at any point', () => {
    const first = '{"event_id":0,"data":{"type":"all_cleared"}}';
    const full = storedTokens(`[${tok(1)},${tok(22)},${tok(333)}]`).replace('[{', `[${first},{`);
    for (let cut = full.indexOf('"tokens"'); cut < full.length - 1; cut++) {
      const parsed = parseKvEvents(full.slice(0, cut));
      expect(parsed.events).toHaveLength(1);
      expect(parsed.issues.map((i) => i.code)).toEqual(['truncated-json']);
    }
  });
});
