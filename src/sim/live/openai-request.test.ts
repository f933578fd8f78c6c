import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HttpError } from './http-kit.js';
import { ctxBody } from './ctx-request-body.js';
import { parseOpenAiRequest, renderChat } from './openai-request.js';

function reject(text: string, endpoint: 'completions' | 'chat' = 'completions'): HttpError {
  try {
    parseOpenAiRequest(endpoint, text, {});
  } catch (err) {
    if (err instanceof HttpError) return err;
    throw err;
  }
  throw new Error('accepted');
}

describe('parseOpenAiRequest', () => {
  it('reads token ids, text and one-element prompt lists', () => {
    expect(Array.from(parseOpenAiRequest('completions', '{"prompt":[1,2,4294967295]}', {}).tokens)).toEqual([
      1, 2, 4294967295,
    ]);
    expect(Array.from(parseOpenAiRequest('completions', '{"prompt":[[5,6]]}', {}).tokens)).toEqual([5, 6]);
    expect(Array.from(parseOpenAiRequest('completions', '{"prompt":"hé😀"}', {}).tokens)).toEqual([104, 233, 0x1f600]);
  });

  it('reads long token-id prompts fast, exactly like JSON.parse, whatever the whitespace and key order', () => {
    const ws = fc.constantFrom('', ' ', '\n', ' \t');
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(0xffff_ffff), ws, ws), { minLength: 1, maxLength: 50 }),
        fc.boolean(),
        ws,
        (items, promptFirst, pad) => {
          const prompt = `[${pad}${items.map(([t, a, b]) => `${a}${t}${b}`).join(',')}${pad}]`;
          const text = promptFirst
            ? `{${pad}"prompt"${pad}:${pad}${prompt},"model":"m"}`
            : `{"model":"m","x":{"prompt":[1]},${pad}"prompt":${prompt}${pad}}`;
          const request = parseOpenAiRequest('completions', text, {});
          expect(Array.from(request.tokens)).toEqual(items.map(([t]) => t));
          expect(JSON.parse(request.promptJson!)).toEqual(items.map(([t]) => t));
          expect(request.body).toEqual(promptFirst ? { model: 'm' } : { model: 'm', x: { prompt: [1] } });
        },
      ),
      { numRuns: 200 },
    );
    for (const badPrompt of ['[1 2]', '[01]', '[1,]', '[,1]', '[]', '[4294967296]', '[1.5]', '[1]]']) {
      expect(() => parseOpenAiRequest('completions', `{"prompt":${badPrompt}}`, {})).toThrow(HttpError);
    }
  });

  it('names the offending field and position', () => {
    expect(reject('{"prompt":[1,2.5]}').message).toContain('prompt[1]');
    expect(reject('{"prompt":[1,4294967296]}').message).toContain('prompt[1]');
    expect(reject('{"prompt":[[1],[2]]}').message).toContain('2 prompts');
    expect(reject('{"prompt":[]}').message).toContain('prompt: empty');
    expect(reject('{"prompt":[1],"max_tokens":0}').message).toContain('max_tokens');
    expect(reject('{"messages":[{"role":"user","content":5}]}', 'chat').message).toContain('messages[0].content');
    expect(reject('[1]').status).toBe(400);
  });

  it('finds the conversation id in the body first, then in the affinity headers', () => {
    expect(parseOpenAiRequest('completions', '{"prompt":[1]}', { 'x-correlation-id': 'c1' })).toMatchObject({
      conversationId: 'c1',
      correlationHeader: 'c1',
    });
    expect(
      parseOpenAiRequest('completions', '{"prompt":[1]}', { 'x-session-id': 's', 'x-correlation-id': 'c1' })
        .conversationId,
    ).toBe('s');
    expect(
      parseOpenAiRequest('completions', '{"prompt":[1],"conversation_params":{"conversation_id":"b"}}', {
        'x-session-id': 's',
      }).conversationId,
    ).toBe('b');
    expect(
      parseOpenAiRequest('completions', '{"prompt":[1],"disaggregated_params":{"request_type":"context_only"}}', {})
        .contextOnly,
    ).toBe(true);
  });

  it('renders chat messages the same way every time', () => {
    const a = renderChat([
      { role: 'system', content: 'x' },
      { role: 'user', content: [{ type: 'text', text: 'y' }] },
    ]);
    expect(String.fromCodePoint(...a)).toBe('<|system|>x\n<|user|>y\n<|assistant|>');
  });
});

describe('ctxBody', () => {
  const disagg = '{"request_type":"context_only","disagg_request_id":7}';

  // The body reaches the CTX server with the same meaning, and every member the relay does not override keeps its
  // exact text. (fc.jsonValue generates -0, which JSON.stringify writes as 0: the expectation is what the raw text
  // says, never the generator's value.)
  it('extends the raw body in place or rebuilds it, with the same meaning', () => {
    const extra = fc.dictionary(
      fc
        .string({ maxLength: 6 })
        .filter((k) => !['prompt', 'stream', 'stream_options', 'disaggregated_params', '__proto__', 'lit'].includes(k)),
      fc.jsonValue({ maxDepth: 2 }),
      { maxKeys: 4 },
    );
    // number texts that JSON.parse + JSON.stringify would not give back as sent
    const literal = fc.option(fc.constantFrom('-0', '-0.0', '1.0', '2.50', '1e2', '18446744073709551615'), {
      nil: undefined,
    });
    fc.assert(
      fc.property(
        fc.array(fc.nat(1000), { minLength: 1, maxLength: 20 }),
        extra,
        fc.constantFrom<unknown>(undefined, true, false),
        literal,
        (prompt, rest, stream, lit) => {
          const body = {
            ...rest,
            prompt,
            ...(stream === undefined ? {} : { stream, stream_options: { include_usage: true } }),
          };
          const json = JSON.stringify(body);
          const raw = `${lit === undefined ? json : `${json.slice(0, -1)},"lit":${lit}}`}\n`;
          const text = ctxBody(parseOpenAiRequest('completions', raw, {}), raw, disagg);
          const expected = JSON.parse(raw) as Record<string, unknown>;
          expected['stream'] = false;
          expected['disaggregated_params'] = JSON.parse(disagg);
          delete expected['stream_options'];
          expect(JSON.parse(text)).toEqual(expected);
          if (lit !== undefined) expect(text).toContain(`"lit":${lit}`);
          expect(text).toContain(`"prompt":${JSON.stringify(prompt)}`);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('keeps -0, 1.0 and 64-bit integers as sent when it has to drop the client stream keys', () => {
    const raw =
      '{"temperature":-0.0,"stream":true,"prompt":[1,2],"seed":18446744073709551615,"top_p":1.0,"stream_options":{"include_usage":true}}';
    expect(ctxBody(parseOpenAiRequest('completions', raw, {}), raw, disagg)).toBe(
      `{"temperature":-0.0,"prompt":[1,2],"seed":18446744073709551615,"top_p":1.0,"stream":false,"disaggregated_params":${disagg}}`,
    );
  });
});
