// parseKvEvents on bad input: issues with codes, paths and offsets; the good items kept; bounded issue lists.
import { describe, expect, it } from 'vitest';
import { parseKvEvents } from './parse-kv-events.js';
import { WIRE_ISSUE_CODES } from './wire-issue-codes.js';
import { DOC_EXAMPLE, tok } from '../../../test/helpers/kv-events-text.js';

describe('parseKvEvents: malformed input', () => {
  const wrap = (data: string, extra = ''): string => `[{"event_id":0,"data":${data},"window_size":4096${extra}}]`;
  const storedWith = (blockJson: string): string =>
    wrap(`{"type":"stored","parent_hash":null,"blocks":[${blockJson}]}`);
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

  interface Case {
    readonly name: string;
    readonly text: string;
    readonly code: string;
    readonly path: string;
    readonly kept?: number;
  }
  /** one field of the first stored block overridden; the issue at that field (or at `tail` inside it) */
  const inBlock = (name: string, over: Record<string, string>, code: string, tail?: string): Case => ({
    name,
    text: storedWith(goodBlock(over)),
    code,
    path: `$[0].data.blocks[0].${tail ?? Object.keys(over)[0]}`,
  });
  /** a removed event whose first hash is `hash` as written */
  const removedHash = (name: string, hash: string, code: string): Case => ({
    name,
    text: wrap(`{"type":"removed","block_hashes":[${hash}]}`),
    code,
    path: '$[0].data.block_hashes[0]',
  });

  const cases: Case[] = [
    removedHash('hash with a fraction', '1.5', 'hash-float'),
    inBlock('hash written 1.0', { block_hash: '1.0' }, 'hash-float'),
    removedHash('hash in exponent form', '1e19', 'hash-exponent'),
    {
      name: 'negative hash',
      text: wrap('{"type":"updated","block_hash":-5,"cache_level":null,"priority":null}'),
      code: 'hash-negative',
      path: '$[0].data.block_hash',
    },
    inBlock('hash above 2^64-1', { block_hash: '18446744073709551616' }, 'hash-out-of-range'),
    removedHash('21-digit hash', '100000000000000000000', 'hash-out-of-range'),
    removedHash('hex hash of the wrong length', '"abcd"', 'invalid-hash-string'),
    inBlock('missing block_hash', { block_hash: '' }, 'missing-field'),
    { name: 'missing data', text: '[{"event_id":0,"window_size":1}]', code: 'missing-field', path: '$[0].data' },
    { name: 'missing event type', text: wrap('{"block_hashes":[1]}'), code: 'missing-field', path: '$[0].data.type' },
    {
      name: 'window_size as a string',
      text: wrap('{"type":"all_cleared"}').replace('4096', '"4096"'),
      code: 'wrong-type',
      path: '$[0].window_size',
    },
    inBlock('tokens not an array', { tokens: '{}' }, 'wrong-type'),
    {
      name: 'unknown event type',
      text: wrap('{"type":"evicted","block_hashes":[1]}'),
      code: 'unknown-event-type',
      path: '$[0].data.type',
    },
    {
      name: 'unknown hash_algo',
      text: wrap('{"type":"all_cleared"}', ',"hash_algo":"md5"'),
      code: 'unknown-hash-algo',
      path: '$[0].hash_algo',
    },
    inBlock('wrong token tag', { tokens: '[{"type":"mm_token","token_id":1}]' }, 'wrong-type-tag', 'tokens[0].type'),
    inBlock(
      'token id beyond uint32',
      { tokens: `[${tok(1)},${tok(4294967296)}]` },
      'token-id-out-of-range',
      'tokens[1].token_id',
    ),
    inBlock('negative token id', { tokens: `[${tok(-1)}]` }, 'token-id-out-of-range', 'tokens[0].token_id'),
    {
      name: 'non-integer event_id',
      text: '[{"event_id":1.5,"data":{"type":"all_cleared"}}]',
      code: 'not-an-integer',
      path: '$[0].event_id',
    },
    {
      name: 'duplicate key',
      text: wrap('{"type":"removed","block_hashes":[1],"block_hashes":[2]}'),
      code: 'duplicate-key',
      path: '$[0].data.block_hashes',
    },
    { name: 'top level not an array', text: '{"event_id":0}', code: 'not-an-array', path: '$' },
    { name: 'empty body', text: '  ', code: 'empty-input', path: '$' },
    {
      name: 'truncated JSON',
      text: DOC_EXAMPLE.slice(0, 200),
      code: 'truncated-json',
      path: '$[1].data.blocks[0].type',
      kept: 1,
    },
    { name: 'trailing garbage', text: `${DOC_EXAMPLE} x`, code: 'trailing-garbage', path: '$', kept: 4 },
    { name: 'trailing comma', text: '[{"type":"all_cleared"},]', code: 'invalid-json', path: '$[1]', kept: 1 },
    removedHash('leading zero', '01', 'invalid-number'),
    inBlock('raw control character in a string', { cache_salt: '"a\u0001b"' }, 'control-character'),
    inBlock('invalid escape', { cache_salt: '"a\\xb"' }, 'invalid-escape'),
    inBlock('unpaired surrogate', { cache_salt: '"a\ud800b"' }, 'invalid-unicode'),
    inBlock('escaped unpaired surrogate', { cache_salt: '"\\udc00"' }, 'invalid-unicode'),
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
    for (const text of texts)
      for (const issue of parseKvEvents(text).issues) expect(Object.keys(WIRE_ISSUE_CODES)).toContain(issue.code);
  });
});

describe('parseKvEvents: issue flood', () => {
  it('lists at most maxItemIssues bad items and counts the rest', () => {
    const bad = '{"type":"removed","block_hashes":[-1]}';
    const good = '{"type":"all_cleared"}';
    const text = `[${Array.from({ length: 10 }, () => bad).join(',')},${good}]`;
    const parsed = parseKvEvents(text, { maxItemIssues: 3 });
    expect(parsed.events.map((e) => e.index)).toEqual([10]);
    expect(parsed.issues.map((i) => i.code)).toEqual([
      'hash-negative',
      'hash-negative',
      'hash-negative',
      'issues-suppressed',
    ]);
    expect(parsed.issues[3]?.message).toContain('7 more');
    expect(parseKvEvents(text).issues).toHaveLength(10);
  });
});
