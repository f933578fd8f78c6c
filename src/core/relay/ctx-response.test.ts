import { encode } from '@msgpack/msgpack';
import { describe, expect, it } from 'vitest';
import { decodeTokenIdsB64, parseCtxResponse } from './ctx-response.js';

const json = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
const plain = { sse: false, complete: true, msgpack: false };
const usage = { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4, prompt_tokens_details: { cached_tokens: 2 } };

/** what numpy's np.asarray(ids, dtype=np.int32).tobytes() gives on little-endian hosts, base64 */
function b64(ids: number[]): string {
  const bytes = new Uint8Array(ids.length * 4);
  const view = new DataView(bytes.buffer);
  ids.forEach((id, i) => view.setInt32(i * 4, id, true));
  return Buffer.from(bytes).toString('base64');
}

describe('parseCtxResponse', () => {
  it('reads the usage and the worker prompt_token_ids (a list)', () => {
    const info = parseCtxResponse(json({ choices: [{ index: 0 }], usage, prompt_token_ids: [9, 8, 7] }), plain);
    expect(info).toMatchObject({
      promptTokens: 3,
      cachedTokens: 2,
      workerPromptTokenForm: 'list',
      workerPromptTokensInvalid: false,
    });
    expect([...(info.workerPromptTokens ?? [])]).toEqual([9, 8, 7]);
  });

  it('takes the first list of a completion with several prompts', () => {
    const info = parseCtxResponse(json({ usage, prompt_token_ids: [[1, 2], [3]] }), plain);
    expect(info.workerPromptTokenForm).toBe('lists');
    expect([...(info.workerPromptTokens ?? [])]).toEqual([1, 2]);
  });

  it('decodes prompt_token_ids_b64: base64 of little-endian int32, with prompt_token_ids null', () => {
    const ids = [0, 1, 127_999, 2_147_483_647, 65_536];
    const info = parseCtxResponse(json({ usage, prompt_token_ids: null, prompt_token_ids_b64: b64(ids) }), plain);
    expect(info.workerPromptTokenForm).toBe('b64');
    expect([...(info.workerPromptTokens ?? [])]).toEqual(ids);
  });

  it('flags ids it cannot read and never throws', () => {
    expect(parseCtxResponse(json({ usage, prompt_token_ids_b64: '!!!' }), plain)).toMatchObject({
      workerPromptTokens: null,
      workerPromptTokensInvalid: true,
      cachedTokens: 2,
    });
    expect(parseCtxResponse(json({ usage, prompt_token_ids_b64: b64([5, -1]) }), plain).workerPromptTokensInvalid).toBe(
      true,
    );
    expect(parseCtxResponse(json({ usage, prompt_token_ids: [1, 'x'] }), plain).workerPromptTokensInvalid).toBe(true);
    expect(parseCtxResponse(json({ usage }), plain)).toMatchObject({
      workerPromptTokens: null,
      workerPromptTokensInvalid: false,
    });
    expect(parseCtxResponse(new TextEncoder().encode('{"usage":'), plain)).toMatchObject({
      promptTokens: null,
      workerPromptTokens: null,
    });
    expect(decodeTokenIdsB64('AAA')).toBeNull();
  });

  it('reads a msgpack-flagged response, and only the usage of SSE or a kept tail', () => {
    const info = parseCtxResponse(encode({ usage, prompt_token_ids: [4, 5] }), { ...plain, msgpack: true });
    expect([...(info.workerPromptTokens ?? [])]).toEqual([4, 5]);
    const sse = new TextEncoder().encode(`data: ${JSON.stringify({ choices: [], usage })}\n\ndata: [DONE]\n\n`);
    expect(parseCtxResponse(sse, { ...plain, sse: true })).toMatchObject({
      promptTokens: 3,
      cachedTokens: 2,
      workerPromptTokens: null,
    });
    expect(
      parseCtxResponse(new TextEncoder().encode('…"prompt_tokens":3,"prompt_tokens_details":{"cached_tokens":2}}}'), {
        ...plain,
        complete: false,
      }),
    ).toMatchObject({ promptTokens: 3, cachedTokens: 2 });
  });
});
