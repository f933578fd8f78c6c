import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { KvEvent } from '../wire/kv-event.js';
import { serializeKvEvents } from '../wire/serialize-kv-events.js';
import { splitJsonArray, splitJsonArrayBytes } from './split-json-array.js';

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

  describe('the compact tokens passed in one step', () => {
    const between = ',"token_extra_id":0},{"type":"unique_token","token_id":';
    const token = (id: number): string => `{"type":"unique_token","token_id":${id},"token_extra_id":0}`;
    const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);
    const both = (body: Uint8Array) => [splitJsonArrayBytes(body, true), splitJsonArrayBytes(body, false)] as const;

    it('splits what it would split byte by byte, wherever that text stands and however the JSON around it is broken', () => {
      const piece = fc.constantFrom(
        between,
        between,
        token(7),
        '{',
        '}',
        '[',
        ']',
        ',',
        '"',
        '\\',
        '"a,]}"',
        ' ',
        '12',
        ':',
      );
      // openings that put the pieces one to four levels deep, and closings that may or may not match them
      const open = fc.constantFrom(
        '',
        '[',
        '[{"a":[',
        '[[',
        '[{"b":[{"c":[',
        '[{"t":[{"type":"unique_token","token_id":1',
      );
      const close = fc.constantFrom('', ']', '}]}]', ']}]', ']]', ']}]}]', ',"token_extra_id":0}]}]');
      fc.assert(
        fc.property(open, fc.array(piece, { maxLength: 24 }), close, (head, pieces, tail) => {
          const [fast, plain] = both(bytes(`${head}${pieces.join('')}${tail}`));
          expect(fast).toEqual(plain);
        }),
        { numRuns: 2000 },
      );
    });

    it('only two levels deep: a top-level array of tokens is still one item a token', () => {
      const flat = `[${token(1)},${token(2)}]`;
      expect(splitJsonArray(flat)).toEqual({ ok: true, items: [token(1), token(2)] });
      const nested = `[[${token(1)},${token(2)}],[${token(3)}]]`;
      expect(splitJsonArray(nested)).toEqual({ ok: true, items: [`[${token(1)},${token(2)}]`, `[${token(3)}]`] });
    });

    it("keeps TensorRT-LLM's bodies item for item", () => {
      const tokens = Array.from({ length: 64 }, (_, i) => i * 977 + 3);
      const events = Array.from({ length: 6 }, (_, k): KvEvent => ({
        eventId: k,
        windowSize: null,
        attentionDpRank: k % 2,
        hashAlgo: null,
        layerGroupId: null,
        data: {
          type: 'stored',
          parentHash: null,
          blocks: [0, 1].map((b) => ({
            blockHash: BigInt(k * 2 + b) + 2n ** 63n,
            tokens: Uint32Array.from(tokens.slice(b * 32, b * 32 + 32)),
            tokenExtraIds: null,
            cacheLevel: 0,
            priority: null,
            mmKeys: [],
            cacheSalt: null,
            loraId: null,
          })),
        },
      }));
      const body = bytes(serializeKvEvents(events));
      const [fast, plain] = both(body);
      expect(fast).toEqual(plain);
      expect(fast.ok && fast.items.length).toBe(6);
      expect(new TextDecoder().decode(body)).toContain(between);
    });
  });
});
