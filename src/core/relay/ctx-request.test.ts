import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CORRELATION_HEADERS, correlationHeaders, parseCtxRequest, type HeaderBag } from './ctx-request.js';

describe('parseCtxRequest', () => {
  it('reads token-id prompts, a 64-bit disagg id exactly and the conversation id', () => {
    const body =
      '{"prompt":[1,2,3],"disaggregated_params":{"request_type":"context_only","disagg_request_id":18446744073709551557,"conversation_id":"c1"}}';
    const info = parseCtxRequest(body, {});
    expect([...(info.promptTokens ?? [])]).toEqual([1, 2, 3]);
    expect(info).toMatchObject({
      disaggRequestId: '18446744073709551557',
      requestType: 'context_only',
      correlationId: 'c1',
      promptCount: 1,
      stream: false,
    });
  });

  it('prefers conversation_params, then headers in the conversation router order', () => {
    expect(
      parseCtxRequest(
        '{"conversation_params":{"conversation_id":"p"},"disaggregated_params":{"conversation_id":"d"}}',
        {},
      ).correlationId,
    ).toBe('p');
    expect(parseCtxRequest('{}', { 'x-session-id': 's', 'x-correlation-id': 'x' }).correlationId).toBe('x');
    expect(parseCtxRequest('{}', { 'x-multi-turn-session-id': ['m', 'n'] }).correlationId).toBe('m');
  });

  it('takes the first of several prompts, and prompt_token_ids for chat', () => {
    const multi = parseCtxRequest('{"prompt":[[5,6],[7]]}', {});
    expect([...(multi.promptTokens ?? [])]).toEqual([5, 6]);
    expect(multi.promptCount).toBe(2);
    const chat = parseCtxRequest(
      '{"messages":[{"role":"user","content":"x"}],"prompt_token_ids":[9,8],"stream":true}',
      {},
    );
    expect([...(chat.promptTokens ?? [])]).toEqual([9, 8]);
    expect(chat.stream).toBe(true);
  });

  it.each([['not json'], ['{"prompt":"text"}'], ['{"prompt":[1,-2]}'], ['{"prompt":[1,4294967296]}'], ['[]']])(
    'yields no tokens for %s and never throws',
    (body) => {
      expect(parseCtxRequest(body, {}).promptTokens).toBeNull();
    },
  );

  it('reads a string disagg id and ignores one outside disaggregated_params', () => {
    expect(parseCtxRequest('{"disaggregated_params":{"disagg_request_id":"r-1"}}', {}).disaggRequestId).toBe('r-1');
    expect(parseCtxRequest('{"x":{"disagg_request_id":5}}', {}).disaggRequestId).toBeNull();
  });

  it('reads token ids exactly however the JSON is spaced, and only the top-level prompt', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 0xffff_ffff }), { minLength: 1, maxLength: 50 }),
        fc.constantFrom('', ' ', '\n  '),
        (ids, sp) => {
          const body = `{${sp}"messages":[{"content":"\\"prompt\\":[9]"}],${sp}"prompt"${sp}:${sp}[${ids.join(`,${sp}`)}${sp}]${sp},"x":{"prompt":[7]}}`;
          expect([...(parseCtxRequest(body, {}).promptTokens ?? [])]).toEqual(ids);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('survives truncated and odd bodies', () => {
    for (const body of ['{"prompt":[1,2', '{"prompt":[1,,2]}', '{"prompt":[1.5]}', '{"a":"\\', '{', '{"prompt":[]}']) {
      expect(parseCtxRequest(body, { 'x-correlation-id': 'c' })).toMatchObject({
        promptTokens: null,
        correlationId: 'c',
      });
    }
  });

  it('reads the same from the correlation headers alone as from all the headers (the scan thread gets only those)', () => {
    const name = fc.constantFrom(...CORRELATION_HEADERS, 'content-type', 'x-other', 'host');
    const value = fc.oneof(fc.constantFrom('', 'a', 'b'), fc.array(fc.constantFrom('', 'x', 'y'), { maxLength: 2 }));
    const body = fc.constantFrom(
      '{"prompt":[1,2]}',
      '{"prompt":[1,2],"conversation_params":{"conversation_id":"c"}}',
      '{"prompt":[1,2],"disaggregated_params":{"conversation_id":7}}',
      'not json',
    );
    fc.assert(
      fc.property(fc.dictionary(name, value), body, (headers: HeaderBag, text) => {
        const only = correlationHeaders(headers);
        expect(Object.keys(only).every((k) => (CORRELATION_HEADERS as readonly string[]).includes(k))).toBe(true);
        expect(parseCtxRequest(text, only)).toEqual(parseCtxRequest(text, headers));
      }),
      { numRuns: 500 },
    );
  });
});
