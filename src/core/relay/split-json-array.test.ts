import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { splitJsonArray } from './split-json-array.js';

describe('splitJsonArray', () => {
  it('keeps each item byte for byte, including u64 hashes above 2^53', () => {
    const a = '{"event_id":1,"data":{"type":"removed","block_hashes":[6875034662206558884,18446744073709551615]}}';
    const b = '{"event_id":2,"data":{"type":"x","s":"a,]}\\"["}}';
    const r = splitJsonArray(`[${a},${b}]`);
    expect(r).toEqual({ ok: true, items: [a, b] });
  });

  it('trims whitespace around items and accepts an empty array', () => {
    expect(splitJsonArray(' [ 1 , [2, 3] ,"x" ] \n')).toEqual({ ok: true, items: ['1', '[2, 3]', '"x"'] });
    expect(splitJsonArray('[]')).toEqual({ ok: true, items: [] });
  });

  it.each([
    ['', 'empty-input'],
    ['{"a":1}', 'not-an-array'],
    ['[1,2', 'truncated-json'],
    ['[{"a":1', 'truncated-json'],
    ['["abc', 'truncated-json'],
    ['[1,]', 'trailing-comma'],
    ['[1 2]', 'expected-comma'],
    ['[,1]', 'empty-item'],
    ['[1] x', 'trailing-garbage'],
  ])('rejects %j with %s', (text, code) => {
    const r = splitJsonArray(text);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.issue.code).toBe(code);
      expect(r.issue.message).toMatch(/offset|empty/);
    }
  });

  it('round-trips any JSON array of values', () => {
    fc.assert(
      fc.property(fc.array(fc.jsonValue(), { maxLength: 8 }), (values) => {
        const texts = values.map((v) => JSON.stringify(v));
        expect(splitJsonArray(`[${texts.join(',')}]`)).toEqual({ ok: true, items: texts });
      }),
      { numRuns: 200 },
    );
  });
});
