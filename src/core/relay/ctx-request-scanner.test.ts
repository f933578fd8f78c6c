import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseCtxRequest, type CtxRequestInfo, type HeaderBag } from './ctx-request.js';
import { CtxRequestScanner, CtxScanScratch, KNOWN_KEYS } from './ctx-request-scanner.js';

const scratch = new CtxScanScratch();

const enc = new TextEncoder();

/** The body fed in chunks cut at the given offsets (any byte, also inside multi-byte characters). */
function scan(body: string, cuts: readonly number[], headers: HeaderBag = {}): CtxRequestInfo | null {
  const bytes = enc.encode(body);
  const scanner = new CtxRequestScanner(scratch);
  let from = 0;
  for (const cut of [...cuts].map((c) => c % (bytes.length + 1)).sort((a, b) => a - b)) {
    scanner.feed(bytes.subarray(from, cut));
    from = cut;
  }
  scanner.feed(bytes.subarray(from));
  return scanner.finish(headers);
}

function plain(info: CtxRequestInfo): unknown {
  return { ...info, promptTokens: info.promptTokens === null ? null : [...info.promptTokens] };
}

const key = fc.constantFrom(...KNOWN_KEYS, 'model', 'pr\\u006fmpt', 'x', 'é', '');
const ws = fc.constantFrom('', ' ', '\n', '\t ', '\r\n');
const ids = fc.array(
  fc.oneof({ arbitrary: fc.integer({ min: 0, max: 0xffff_ffff }), weight: 30 }, fc.constant(0xffff_ffff + 1)),
  { maxLength: 12 },
);
const tokenArray = fc
  .tuple(
    ids,
    ws,
    fc.oneof({ arbitrary: fc.constant(''), weight: 6 }, fc.constantFrom(',', ' ,', '.5', '"a"', '[1]', '-1', '007')),
  )
  .map(([xs, sp, odd]) => `[${sp}${xs.join(`${sp},${sp}`)}${odd}${sp}]`);
const str = fc.constantFrom('"text"', '"a\\"b"', '"[1,2]"', '"}{,"', '"\\\\"', '"ü😀"', '""');
const small = fc.constantFrom(
  'true',
  'false',
  'null',
  '12',
  '-3.5e2',
  '{}',
  '[]',
  '{"conversation_id":"c1"}',
  '{"conversation_id":7}',
  '{"disagg_request_id":18446744073709551557,"request_type":"context_only"}',
  '{"disagg_request_id":"r-\\"1"}',
  '[[5,6],[7]]',
  '[["a"],[1]]',
  '[{"role":"user","content":"\\"prompt\\":[9]"}]',
  '',
);
const value = fc.oneof({ arbitrary: tokenArray, weight: 2 }, str, small);
const member = fc.tuple(ws, key, ws, value, ws).map(([a, k, b, v, c]) => `${a}"${k}"${b}:${b}${v}${c}`);
const body = fc
  .tuple(
    ws,
    fc.array(member, { maxLength: 6 }),
    fc.oneof({ arbitrary: fc.constant('}'), weight: 4 }, fc.constantFrom('', ',}', ']', '} trailing', '}}')),
  )
  .map(([a, ms, end]) => `${a}{${ms.join(',')}${end}`);
const headers = fc.constantFrom<HeaderBag>({}, { 'x-correlation-id': 'h' }, { 'x-session-id': ['s', 't'] });

describe('CtxRequestScanner', () => {
  it('reads exactly what parseCtxRequest reads, however the body is cut into chunks', () => {
    let withTokens = 0;
    fc.assert(
      fc.property(body, fc.array(fc.nat(), { maxLength: 5 }), headers, (text, cuts, h) => {
        const streamed = scan(text, cuts, h);
        if (streamed !== null) expect(plain(streamed)).toEqual(plain(parseCtxRequest(text, h)));
        if (streamed?.promptTokens != null) withTokens++;
      }),
      { numRuns: 2000 },
    );
    // the comparison must have covered the fast path, not only the text-path fallbacks
    expect(withTokens).toBeGreaterThan(150);
  });

  it('agrees on truncated and corrupted bodies', () => {
    fc.assert(
      fc.property(
        body,
        fc.nat(),
        fc.nat(),
        fc.integer({ min: 0, max: 127 }),
        fc.array(fc.nat(), { maxLength: 3 }),
        (text, cut, at, ch, cuts) => {
          const truncated = text.slice(0, cut % (text.length + 1));
          const s1 = scan(truncated, cuts);
          if (s1 !== null) expect(plain(s1)).toEqual(plain(parseCtxRequest(truncated, {})));
          const p = at % (text.length + 1);
          const corrupted = text.slice(0, p) + String.fromCharCode(ch) + text.slice(p + 1);
          const s2 = scan(corrupted, cuts);
          if (s2 !== null) expect(plain(s2)).toEqual(plain(parseCtxRequest(corrupted, {})));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('answers itself (no text path) for flat id prompts, text prompts and chat, in one byte chunks too', () => {
    const bodies = [
      '{"model":"m","prompt":[1, 2,3],"stream":true,"disaggregated_params":{"disagg_request_id":18446744073709551557}}',
      '{"prompt":"hello [1]"}',
      '{"messages":[{"role":"user","content":"hi"}],"prompt_token_ids":[4,5]}',
    ];
    for (const text of bodies) {
      const oneByte = Array.from({ length: text.length }, (_, i) => i);
      const streamed = scan(text, oneByte, { 'x-correlation-id': 'c' });
      expect(streamed).not.toBeNull();
      expect(plain(streamed as CtxRequestInfo)).toEqual(plain(parseCtxRequest(text, { 'x-correlation-id': 'c' })));
    }
    expect(scan(bodies[0] as string, [])).toMatchObject({
      disaggRequestId: '18446744073709551557',
      stream: true,
      promptCount: 1,
    });
  });

  it('hands several prompts, and oversized kept members, to the text path', () => {
    expect(scan('{"prompt":[[5,6],[7]]}', [])).toBeNull();
    expect(scan('{"prompt":[1,"x"]}', [])).toBeNull();
    expect(scan(`{"conversation_params":{"conversation_id":"${'x'.repeat(70_000)}"}}`, [])).toBeNull();
  });

  it('agrees on long id arrays of every id length and separator, cut anywhere (also inside ids)', () => {
    // long enough for the scanner's run-of-ids loop, which needs room in the chunk for an id and its separator
    const id = fc.oneof(
      fc.integer({ min: 0, max: 9 }),
      fc.integer({ min: 10, max: 152_063 }),
      fc.integer({ min: 1_000_000, max: 99_999_999 }),
      fc.integer({ min: 100_000_000, max: 999_999_999 }),
      fc.integer({ min: 1_000_000_000, max: 0xffff_ffff }),
      fc.constantFrom(0xffff_ffff + 1, 99_999_999_999),
    );
    const sep = fc.oneof(
      { arbitrary: fc.constantFrom(',', ', '), weight: 20 },
      fc.constantFrom(' ,', ',  ', ',\n', '\t,', ',,', '.', ' ', ',é', 'é,', ',\u0000'),
    );
    const ids = fc.array(fc.tuple(id, sep), { minLength: 1, maxLength: 120 });
    const idArray = fc
      .tuple(ids, fc.constantFrom('', ' '), fc.constantFrom(']', ' ]', ',]', '', '"x"]'))
      .map(
        ([xs, lead, end]) =>
          `[${lead}${xs.map(([v, s], k) => (k + 1 < xs.length ? `${v}${s}` : `${v}`)).join('')}${end}`,
      );
    const text = fc
      .tuple(idArray, fc.constantFrom('prompt', 'prompt_token_ids'))
      .map(([arr, k]) => `{"model":"m","${k}":${arr},"stream":true}`);
    let read = 0;
    fc.assert(
      fc.property(text, fc.array(fc.nat(), { maxLength: 8 }), (t, cuts) => {
        const streamed = scan(t, cuts);
        if (streamed !== null) expect(plain(streamed)).toEqual(plain(parseCtxRequest(t, {})));
        if (streamed?.promptTokens != null) read++;
      }),
      { numRuns: 1500 },
    );
    expect(read).toBeGreaterThan(100);
  });

  it('reads ids cut at every offset of a chunk, also after each digit of a long id', () => {
    const xs = [7, 4_294_967_295, 123_456_789, 1_234_567_890, 0, 42, 999_999_999, 5, 31_337, 8, 152_063, 1];
    for (const sepText of [',', ', ']) {
      const text = `{"prompt":[${xs.join(sepText)}]}`;
      const whole = parseCtxRequest(text, {});
      expect([...(whole.promptTokens ?? [])]).toEqual(xs);
      for (let cut = 0; cut <= text.length; cut++)
        expect(plain(scan(text, [cut]) as CtxRequestInfo)).toEqual(plain(whole));
    }
    // one past 32 bits, wherever it is cut, sends the prompt to the text path (which reads it as malformed)
    const over = `{"prompt":[1,2,3,4,5,6,4294967296,7,8,9,10,11,12]}`;
    for (let cut = 0; cut <= over.length; cut++) {
      const streamed = scan(over, [cut]);
      if (streamed !== null) expect(plain(streamed)).toEqual(plain(parseCtxRequest(over, {})));
      else expect(parseCtxRequest(over, {}).promptTokens).toBeNull();
    }
  });

  it('reads a large id prompt split into many chunks', () => {
    const xs = Array.from({ length: 40_000 }, (_, i) => (i * 7919) % 152_064);
    const text = JSON.stringify({ model: 'm', prompt: xs, max_tokens: 1 });
    const cuts = Array.from({ length: 50 }, (_, i) => i * 4099 + 3);
    expect([...(scan(text, cuts)?.promptTokens ?? [])]).toEqual(xs);
  });
});
