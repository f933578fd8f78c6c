// parseKvEvents properties: round trips, fast and general paths agreeing, exact hash digits, token runs.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parseKvEvents } from './parse-kv-events.js';
import { serializeKvEvent, serializeKvEvents } from './serialize-kv-events.js';
import type { KvEvent } from './kv-event.js';
import { kvEventArb } from '../../../test/helpers/kv-event-arbitraries.js';
import { DOC_EXAMPLE, block, ok, spread, tok } from '../../../test/helpers/kv-events-text.js';

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
      fc.property(
        fc.array(fc.bigInt({ min: 0n, max: 18446744073709551615n }), { minLength: 1, maxLength: 20 }),
        (hashes) => {
          const [event] = ok(`[{"type":"removed","block_hashes":[${hashes.join(',')}]}]`);
          expect(event?.data).toEqual({ type: 'removed', blockHashes: hashes });
        },
      ),
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
      {
        eventId: 0,
        data: { type: 'stored', parentHash: null, blocks: [big, small] },
        windowSize: 1,
        attentionDpRank: null,
        hashAlgo: null,
        layerGroupId: null,
      },
    ];
    const text = serializeKvEvents(events);
    expect(ok(text)).toEqual(events);
    expect(ok(spread(text))).toEqual(events);
  });
});

describe('parseKvEvents: token runs (bulk path and its hand-over to the per-token path)', () => {
  const storedTokens = (tokens: string): string =>
    `[{"event_id":0,"data":{"type":"stored","parent_hash":null,"blocks":[{"type":"stored_block","block_hash":1,"tokens":${tokens},"cache_level":0,"priority":35}]}}]`;
  const piece = fc.oneof(
    fc.nat({ max: 0xffff_ffff }).map((id) => ({ text: tok(id), id, extra: 0 })),
    fc.constantFrom(0, 0xffff_ffff).map((id) => ({ text: tok(id), id, extra: 0 })),
    fc
      .tuple(fc.nat({ max: 1000 }), fc.integer({ min: 1, max: 9 }))
      .map(([id, extra]) => ({ text: tok(id, extra), id, extra })),
    fc.nat({ max: 1000 }).map((id) => ({ text: `{"token_id":${id},"type":"unique_token"}`, id, extra: 0 })),
    fc
      .nat({ max: 1000 })
      .map((id) => ({ text: `{ "type":"unique_token","token_id":${id},"token_extra_id":0}`, id, extra: 0 })),
  );

  it('reads any mix of compact and other spellings, separators included, like JSON.parse', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(piece, fc.constantFrom(',', ', ', ' ,\n')), { maxLength: 40 }),
        fc.constantFrom('', ' '),
        (items, pad) => {
          const body = items.map(([p], i) => (i === 0 ? '' : items[i - 1]![1]) + p.text).join('');
          const [event] = ok(storedTokens(`[${pad}${body}${pad}]`));
          const b = event!.data.type === 'stored' ? event!.data.blocks[0]! : null;
          expect(Array.from(b!.tokens)).toEqual(items.map(([p]) => p.id));
          const extras = items.map(([p]) => p.extra);
          expect(b!.tokenExtraIds === null ? extras.map(() => 0) : Array.from(b!.tokenExtraIds)).toEqual(extras);
          expect(b!.tokenExtraIds === null).toBe(extras.every((x) => x === 0));
        },
      ),
      { numRuns: 300 },
    );
  });

  it.each([
    [
      'an id beyond uint32 after a compact run',
      `[${tok(1)},${tok(2)},${tok(4294967296)},${tok(3)}]`,
      'token-id-out-of-range',
      'tokens[2].token_id',
      '4294967296',
    ],
    [
      'a ten-digit id beyond uint32 in the first token',
      `[${tok(9999999999)}]`,
      'token-id-out-of-range',
      'tokens[0].token_id',
      '9999999999',
    ],
    [
      'a leading zero after a compact run',
      `[${tok(1)},{"type":"unique_token","token_id":01,"token_extra_id":0}]`,
      'invalid-number',
      'tokens[1].token_id',
      '01',
    ],
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
