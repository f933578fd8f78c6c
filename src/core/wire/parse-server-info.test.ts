import { describe, expect, it } from 'vitest';
import { parseServerInfo } from './parse-server-info.js';

describe('parseServerInfo', () => {
  it('reads a newer worker answer', () => {
    const { value, issues } = parseServerInfo(
      '{"disaggregated_params":{"request_type":"context_only"},"kv_cache_hash_algo":"v2_sha256","tokens_per_block":64,"render_fingerprint":"abc","max_batch_size":64,"extra":18446744073709551615}',
    );
    expect(issues).toEqual([]);
    expect(value).toMatchObject({
      kvCacheHashAlgo: 'v2_sha256',
      disaggregatedParams: { request_type: 'context_only' },
      tokensPerBlock: 64,
      renderFingerprint: 'abc',
      maxBatchSize: 64,
    });
    expect(value?.raw['extra']).toBe(18446744073709551615n);
  });

  it('reads an older answer with only disaggregated_params as "not stated"', () => {
    const { value, issues } = parseServerInfo('{"disaggregated_params":null}');
    expect(issues).toEqual([]);
    expect(value).toMatchObject({
      kvCacheHashAlgo: null,
      disaggregatedParams: null,
      tokensPerBlock: null,
      renderFingerprint: null,
      maxBatchSize: null,
    });
  });

  it('reports wrong fields with path and offset and keeps the others', () => {
    const text = '{"kv_cache_hash_algo":"auto","tokens_per_block":32.5,"render_fingerprint":7}';
    const { value, issues } = parseServerInfo(text);
    expect(value).toMatchObject({ kvCacheHashAlgo: null, tokensPerBlock: null, renderFingerprint: null });
    expect(issues.map((i) => [i.code, i.path, i.offset])).toEqual([
      ['unknown-hash-algo', '$.kv_cache_hash_algo', text.indexOf('"auto"')],
      ['not-an-integer', '$.tokens_per_block', text.indexOf('32.5')],
      ['wrong-type', '$.render_fingerprint', text.indexOf('7}')],
    ]);
  });

  it('rejects a body that is not an object, or not JSON', () => {
    expect(parseServerInfo('[1]')).toEqual({
      value: null,
      issues: [expect.objectContaining({ code: 'wrong-type', path: '$' })],
    });
    expect(parseServerInfo('<html>').issues).toEqual([expect.objectContaining({ code: 'invalid-json', offset: 0 })]);
  });
});
