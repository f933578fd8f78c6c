import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseTokenList } from './token-list.js';

describe('parseTokenList', () => {
  it.each([
    ['1,2,3', [1, 2, 3]],
    ['1 2\t3\n4', [1, 2, 3, 4]],
    [' 1, 2 ,3 ', [1, 2, 3]],
    ['4294967295', [4294967295]],
    ['', []],
    ['\n', []],
  ])('parses %j', (text, expected) => {
    const parsed = parseTokenList(text);
    expect(parsed.ok && Array.from(parsed.tokens)).toEqual(expected);
  });

  it.each([
    ['1,,2', 'empty-token', 2],
    ['1,2,', 'empty-token', 4],
    [',1', 'empty-token', 0],
    ['1,a2,3', 'not-a-token-id', 2],
    ['1,-2', 'not-a-token-id', 2],
    ['1.5', 'not-a-token-id', 0],
    ['4294967296', 'token-id-out-of-range', 0],
  ])('rejects %j with %s at offset %d', (text, code, offset) => {
    const parsed = parseTokenList(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.issue.code).toBe(code);
      expect(parsed.issue.offset).toBe(offset);
    }
  });

  it('round-trips any uint32 list in either separator style', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 0xffff_ffff })),
        fc.constantFrom(',', ' ', ', ', '\n'),
        (tokens, sep) => {
          const parsed = parseTokenList(tokens.join(sep));
          expect(parsed.ok && Array.from(parsed.tokens)).toEqual(tokens);
        },
      ),
    );
  });

  it('never throws on arbitrary text', () => {
    fc.assert(fc.property(fc.string(), (text) => void parseTokenList(text)));
  });
});
