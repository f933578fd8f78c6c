import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseLosslessJson } from '../../core/wire/lossless-json.js';
import { jsonText } from './json-text.js';

describe('jsonText', () => {
  it('writes u64 integers exactly', () => {
    const text = '{"request_id":18446744073709551615,"t":1.5,"a":[null,true,"x\\"y"]}';
    expect(jsonText(parseLosslessJson(text).value!)).toBe(text);
  });

  it('round-trips through the lossless parser', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify(value);
        const tree = parseLosslessJson(text).value!;
        expect(parseLosslessJson(jsonText(tree)).value).toEqual(tree);
      }),
      { numRuns: 200 },
    );
  });
});
