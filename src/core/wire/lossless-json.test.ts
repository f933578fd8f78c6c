import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { isJsonInteger, isJsonObject, jsonToNumber, jsonToSafeInteger, parseLosslessJson } from './lossless-json.js';

describe('parseLosslessJson', () => {
  it('returns integer tokens as exact bigint and float / exponent tokens as number', () => {
    const { value, issues } = parseLosslessJson(
      '{"a":18446744073709551615,"b":1.0,"c":1e19,"d":-3,"e":[0.5,2],"f":"s","g":null,"h":true}',
    );
    expect(issues).toEqual([]);
    expect(value).toEqual({ a: 18446744073709551615n, b: 1, c: 1e19, d: -3n, e: [0.5, 2n], f: 's', g: null, h: true });
    if (!isJsonObject(value)) throw new Error('object expected');
    expect(isJsonInteger(value['a'])).toBe(true);
    expect(isJsonInteger(value['b'])).toBe(false);
    expect(jsonToSafeInteger(value['a'])).toBeNull();
    expect(jsonToSafeInteger(value['d'])).toBe(-3);
    expect(jsonToSafeInteger(value['b'])).toBeNull();
    expect(jsonToNumber(value['b'])).toBe(1);
    expect(jsonToNumber(value['f'])).toBeNull();
  });

  it('keeps "__proto__" as plain data', () => {
    const { value } = parseLosslessJson('{"__proto__":{"polluted":1}}');
    expect(isJsonObject(value) && Object.keys(value)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('reports problems with code, path and offset and no value', () => {
    const cases: [string, string, string, number][] = [
      ['{"a":[1,2', 'truncated-json', '$.a[1]', 9],
      ['{"a":1} x', 'trailing-garbage', '$', 8],
      ['{"a":01}', 'invalid-number', '$.a', 5],
      ['{"a":"\u0002"}', 'control-character', '$.a', 6],
      ['', 'empty-input', '$', 0],
      ['{"a" 1}', 'invalid-json', '$', 5],
    ];
    for (const [text, code, path, offset] of cases) {
      const parsed = parseLosslessJson(text);
      expect(parsed.value).toBeUndefined();
      expect(parsed.issues).toEqual([expect.objectContaining({ code, path, offset })]);
    }
  });

  it('reports a duplicate key without failing (the last value wins)', () => {
    const parsed = parseLosslessJson('{"x":{"a":1,"a":2}}');
    expect(parsed.value).toEqual({ x: { a: 2n } });
    expect(parsed.issues).toEqual([expect.objectContaining({ code: 'duplicate-key', path: '$.x.a', offset: 12 })]);
  });

  it('agrees with JSON.parse on every JSON document (numbers compared by value)', () => {
    const normalise = (v: unknown): unknown =>
      typeof v === 'bigint'
        ? Number(v)
        : Array.isArray(v)
          ? v.map(normalise)
          : v !== null && typeof v === 'object'
            ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, normalise(x)]))
            : v;
    fc.assert(
      fc.property(fc.json({ maxDepth: 4 }), (text) => {
        const parsed = parseLosslessJson(text);
        expect(parsed.issues.filter((i) => i.code !== 'duplicate-key')).toEqual([]);
        expect(normalise(parsed.value)).toEqual(normalise(JSON.parse(text)));
      }),
      { numRuns: 300 },
    );
  });

  it('never throws and rejects exactly what JSON.parse rejects', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary-ascii', maxLength: 30 }), (text) => {
        const parsed = parseLosslessJson(text);
        let native = true;
        try {
          JSON.parse(text);
        } catch {
          native = false;
        }
        expect(parsed.value !== undefined).toBe(native);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('parseLosslessJson: hostile input', () => {
  it('reports deep nesting and non-strings as issues', () => {
    expect(parseLosslessJson('['.repeat(100_000)).issues.map((i) => i.code)).toEqual(['too-deep']);
    expect(parseLosslessJson(null as unknown as string).issues.map((i) => i.code)).toEqual(['internal']);
  });
});
