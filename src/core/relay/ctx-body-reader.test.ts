import { encode } from '@msgpack/msgpack';
import { describe, expect, it } from 'vitest';
import { ctxBodyEncoding } from './ctx-body-encoding.js';
import { createCtxBodyReader } from './ctx-body-reader.js';
import { CtxScanScratch } from './ctx-request-scanner.js';

const scratch = new CtxScanScratch();

function read(
  encoding: 'json' | 'msgpack' | 'unknown',
  body: Uint8Array,
  headers: Record<string, string> = {},
  split = 7,
) {
  const reader = createCtxBodyReader(encoding, scratch);
  for (let i = 0; i < body.length; i += split) reader.feed(body.subarray(i, i + split));
  return reader.finish(headers);
}

describe('ctxBodyEncoding', () => {
  it('reads msgpack exactly when X-TRTLLM-Msgpack is "1", as the worker does', () => {
    expect(ctxBodyEncoding({ 'content-type': 'application/json', 'x-trtllm-msgpack': '1' })).toBe('msgpack');
    expect(ctxBodyEncoding({ 'content-type': 'application/json', 'x-trtllm-msgpack': 'true' })).toBe('json');
    expect(ctxBodyEncoding({ 'content-type': 'application/json' })).toBe('json');
    expect(ctxBodyEncoding({ 'content-encoding': 'gzip' })).toBe('unknown');
    expect(ctxBodyEncoding({ 'content-encoding': 'identity' })).toBe('json');
  });
});

describe('createCtxBodyReader (msgpack)', () => {
  it('reads what TensorRT-LLM sends: ids, a 64-bit disagg id exactly, the conversation id, no X-Correlation-ID', () => {
    // msgspec encodes ints > 2^63 as uint64: @msgpack/msgpack does the same for bigint
    const body = encode(
      {
        model: 'm',
        prompt: [1, 70000, 4294967295],
        stream: false,
        disaggregated_params: {
          request_type: 'context_only',
          disagg_request_id: 18446744073709551557n,
          conversation_id: 'conv-1',
          schedule_style: null,
        },
      },
      { useBigInt64: true },
    );
    const info = read('msgpack', body);
    expect([...(info?.promptTokens ?? [])]).toEqual([1, 70000, 4294967295]);
    expect(info).toMatchObject({
      disaggRequestId: '18446744073709551557',
      requestType: 'context_only',
      correlationId: 'conv-1',
      promptForm: 'token-ids',
      unreadable: null,
      stream: false,
    });
  });

  it('reads chat messages, router-written prompt_token_ids, text prompts and conversation_params', () => {
    const chat = read(
      'msgpack',
      encode({
        messages: [{ role: 'user', content: 'hi' }],
        conversation_params: { conversation_id: 'c2' },
        stream: true,
      }),
    );
    expect(chat).toMatchObject({
      promptForm: 'chat',
      promptTokens: null,
      correlationId: 'c2',
      stream: true,
      unreadable: null,
    });
    const written = read('msgpack', encode({ messages: [{ role: 'user', content: 'hi' }], prompt_token_ids: [5, 6] }));
    expect(written?.promptForm).toBe('chat');
    expect([...(written?.promptTokens ?? [])]).toEqual([5, 6]);
    expect(read('msgpack', encode({ prompt: 'text' }))).toMatchObject({
      promptForm: 'text',
      promptCount: 1,
      unreadable: null,
    });
    const multi = read('msgpack', encode({ prompt: [[7, 8], [9]] }));
    expect([...(multi?.promptTokens ?? [])]).toEqual([7, 8]);
    expect(multi?.promptCount).toBe(2);
  });

  it('says why a body cannot be read, and keeps the header correlation id', () => {
    const headers = { 'x-correlation-id': 'h' };
    expect(read('msgpack', Uint8Array.from([0xc1]), headers)).toMatchObject({
      unreadable: 'malformed',
      correlationId: 'h',
    });
    expect(read('msgpack', encode([1, 2]), headers)).toMatchObject({ unreadable: 'malformed' });
    expect(read('msgpack', encode({ prompt: [1, -2] }), headers)).toMatchObject({
      unreadable: 'malformed',
      promptTokens: null,
    });
    expect(read('msgpack', encode({ model: 'm' }), headers)).toMatchObject({ unreadable: 'no_prompt' });
    expect(read('unknown', Uint8Array.from([1, 2, 3]), headers)).toMatchObject({
      unreadable: 'unknown_encoding',
      correlationId: 'h',
    });
    // a JSON body sent under the msgpack flag is malformed msgpack (the worker would fail to decode it too)
    expect(read('msgpack', new TextEncoder().encode('{"prompt":[1,2]}'))).toMatchObject({ unreadable: 'malformed' });
  });

  it('agrees with the JSON path on the same request', () => {
    const value = {
      prompt: [3, 1, 4, 1, 5],
      disaggregated_params: { request_type: 'context_only', disagg_request_id: 42, conversation_id: 'c' },
    };
    const fromJson = read('json', new TextEncoder().encode(JSON.stringify(value)));
    const fromMsgpack = read('msgpack', encode(value));
    expect(fromMsgpack).toEqual(fromJson);
  });
});

describe('createCtxBodyReader (json)', () => {
  it('names the prompt form and unreadable bodies', () => {
    const json = (v: string) => read('json', new TextEncoder().encode(v));
    expect(json('{"prompt":"hello"}')).toMatchObject({ promptForm: 'text', unreadable: null });
    expect(json('{"messages":[{"role":"user","content":"x"}]}')).toMatchObject({
      promptForm: 'chat',
      unreadable: null,
    });
    expect(json('{"prompt":[1,2]}')).toMatchObject({ promptForm: 'token-ids', unreadable: null });
    expect(json('{"model":"m"}')).toMatchObject({ promptForm: null, unreadable: 'no_prompt' });
    expect(json('{"prompt":[1,2')).toMatchObject({ unreadable: 'malformed' });
    expect(json('\x82\xa6prompt')).toMatchObject({ unreadable: 'malformed' });
  });
});
