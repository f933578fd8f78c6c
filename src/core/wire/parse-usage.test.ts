import { describe, expect, it } from 'vitest';
import { parseUsage } from './parse-usage.js';

describe('parseUsage', () => {
  it('reads usage of a chat response, cached tokens included', () => {
    const text =
      '{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hi"}}],' +
      '"usage":{"prompt_tokens":1200,"total_tokens":1210,"completion_tokens":10,"prompt_tokens_details":{"cached_tokens":1024}}}';
    expect(parseUsage(text)).toEqual({
      value: { promptTokens: 1200, completionTokens: 10, totalTokens: 1210, cachedTokens: 1024 },
      issues: [],
    });
  });

  it('tells "no cached_tokens reported" (null) from 0', () => {
    expect(parseUsage('{"usage":{"prompt_tokens":5,"completion_tokens":1}}').value?.cachedTokens).toBeNull();
    expect(
      parseUsage('{"usage":{"prompt_tokens":5,"prompt_tokens_details":{"cached_tokens":0}}}').value?.cachedTokens,
    ).toBe(0);
    expect(parseUsage('{"usage":{"prompt_tokens":5,"prompt_tokens_details":null}}').value?.cachedTokens).toBeNull();
  });

  it('reads SSE chunk data: no usage, null usage, a final usage chunk and [DONE]', () => {
    expect(parseUsage('{"choices":[{"delta":{"content":"a"}}]}')).toEqual({ value: null, issues: [] });
    expect(parseUsage('{"choices":[],"usage":null}')).toEqual({ value: null, issues: [] });
    expect(
      parseUsage(
        '{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5,"prompt_tokens_details":{"cached_tokens":2}}}',
      ).value,
    ).toEqual({
      promptTokens: 3,
      completionTokens: 2,
      totalTokens: 5,
      cachedTokens: 2,
    });
    expect(parseUsage(' [DONE] ')).toEqual({ value: null, issues: [] });
    expect(parseUsage('data: [DONE]')).toEqual({ value: null, issues: [] });
    expect(
      parseUsage('data: {"usage":{"prompt_tokens":4,"prompt_tokens_details":{"cached_tokens":x}}}').issues,
    ).toEqual([expect.objectContaining({ code: 'invalid-json', offset: 75 })]);
    expect(parseUsage('data: {"usage":{"prompt_tokens":4}}').value?.promptTokens).toBe(4);
  });

  it('reports a malformed count with its path and offset', () => {
    const text = '{"usage":{"prompt_tokens":-1,"prompt_tokens_details":{"cached_tokens":"7"}}}';
    const { value, issues } = parseUsage(text);
    expect(value).toEqual({ promptTokens: null, completionTokens: null, totalTokens: null, cachedTokens: null });
    expect(issues.map((i) => [i.code, i.path, i.offset])).toEqual([
      ['number-out-of-range', '$.usage.prompt_tokens', text.indexOf('-1')],
      ['wrong-type', '$.usage.prompt_tokens_details.cached_tokens', text.indexOf('"7"')],
    ]);
    expect(parseUsage('{"usage":').issues).toEqual([expect.objectContaining({ code: 'truncated-json', offset: 9 })]);
  });
});
