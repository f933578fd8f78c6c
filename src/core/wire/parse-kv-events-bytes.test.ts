// parseKvEvents from the bytes a worker sent (the relay's path): the same events as from text, offsets in bytes,
// UTF-8 checked on the bytes themselves, and parses that share nothing (each body's token ids stay its own).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseKvEvents } from './parse-kv-events.js';
import { serializeKvEvents } from './serialize-kv-events.js';
import { kvEventArb } from '../../../test/helpers/kv-event-arbitraries.js';
import { DOC_EXAMPLE, block, tok } from '../../../test/helpers/kv-events-text.js';

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);
const stored = (salt: string, hash: string): string =>
  `[{"event_id":7,"data":{"type":"stored","parent_hash":null,"blocks":[{"type":"stored_block","block_hash":${hash},` +
  `"tokens":[${tok(1)},${tok(2)}],"cache_level":0,"priority":35,"mm_keys":[],"cache_salt":${salt}}]}}]`;

describe('parseKvEvents from bytes', () => {
  it('reads the same events from a body’s bytes as from its text', () => {
    fc.assert(
      fc.property(fc.array(kvEventArb, { maxLength: 6 }), (events) => {
        const text = serializeKvEvents(events);
        const fromBytes = parseKvEvents(utf8(text));
        expect(fromBytes.issues).toEqual([]);
        expect(fromBytes.events.map((e) => e.event)).toEqual(parseKvEvents(text).events.map((e) => e.event));
        expect(fromBytes.events.map((e) => e.raw).join(',')).toBe(text.slice(1, -1));
      }),
      { numRuns: 200 },
    );
  });

  it('keeps u64 hashes exact above 2^53 and 2^63, and reads non-ASCII strings', () => {
    const parsed = parseKvEvents(utf8(stored('"sälz-🧂"', '18446744073709551615')));
    expect(parsed.issues).toEqual([]);
    const data = parsed.events[0]?.event.data;
    expect(data).toEqual({
      type: 'stored',
      parentHash: null,
      blocks: [block(18446744073709551615n, [1, 2], { cacheSalt: 'sälz-🧂' })],
    });
    expect(parseKvEvents(utf8(stored('null', '9223372036854775809'))).events[0]?.event.data).toMatchObject({
      blocks: [{ blockHash: 9223372036854775809n }],
    });
  });

  it('gives offsets in bytes for a byte body and in UTF-16 units for the same body as text', () => {
    const text = stored('"ü🧂"', '1.5');
    const bytes = utf8(text);
    const fromBytes = parseKvEvents(bytes).issues[0];
    const fromText = parseKvEvents(text).issues[0];
    expect(fromBytes?.code).toBe('hash-float');
    expect(fromText?.code).toBe('hash-float');
    // the hash comes before the salt: the same offset either way
    expect(fromBytes?.offset).toBe(text.indexOf('1.5'));
    expect(fromText?.offset).toBe(text.indexOf('1.5'));
    // an error after the non-ASCII salt: 'ü' is 2 bytes (1 unit), '🧂' 4 bytes (2 units)
    const late = `${text.slice(0, -1)},garbage]`;
    const lateBytes = parseKvEvents(utf8(late)).issues.at(-1);
    const lateText = parseKvEvents(late).issues.at(-1);
    expect(lateText?.offset).toBe(late.indexOf('garbage'));
    expect(lateBytes?.offset).toBe(late.indexOf('garbage') + 1 + 2);
    expect(lateText?.message).toContain(`offset ${late.indexOf('garbage')}`);
    expect(lateBytes?.message).toContain(`offset ${late.indexOf('garbage') + 3}`);
  });

  it('rejects bytes that are not UTF-8 inside strings, with the offset of the bad byte', () => {
    const head = utf8(stored('"ab', '1').split('"ab')[0]! + '"ab');
    const tail = utf8('"}]}}]');
    const body = (bad: number[]): Uint8Array => Uint8Array.from([...head, ...bad, ...tail]);
    const at = head.length;
    for (const bad of [[0xff], [0xc0, 0x80], [0xe2, 0x82], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0x80]]) {
      const issues = parseKvEvents(body(bad)).issues;
      expect(issues, bad.map((b) => b.toString(16)).join(' ')).toEqual([
        expect.objectContaining({ code: 'invalid-unicode', offset: at }),
      ]);
    }
    // a multi-byte character cut off by the end of the body is truncation
    expect(parseKvEvents(Uint8Array.from([...head, 0xe2, 0x82])).issues).toEqual([
      expect.objectContaining({ code: 'truncated-json', offset: head.length + 2 }),
    ]);
  });

  it('reads a body with a UTF-8 byte order mark', () => {
    const parsed = parseKvEvents(Uint8Array.from([0xef, 0xbb, 0xbf, ...utf8(DOC_EXAMPLE)]));
    expect(parsed.issues).toEqual([]);
    expect(parsed.events).toHaveLength(4);
  });

  it("keeps each body's token ids its own: a later parse, even of a larger body, changes none", () => {
    const first = parseKvEvents(utf8(stored('null', '1'))).events[0]?.event.data;
    const many = Array.from({ length: 5000 }, (_, i) => tok(i + 100)).join(',');
    const second = parseKvEvents(utf8(stored('null', '2').replace(`${tok(1)},${tok(2)}`, many)));
    expect(second.issues).toEqual([]);
    expect(first).toMatchObject({ blocks: [{ tokens: Uint32Array.from([1, 2]) }] });
  });
});
