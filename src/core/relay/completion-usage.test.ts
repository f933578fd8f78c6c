import { describe, expect, it } from 'vitest';
import { parseCompletionUsage } from './completion-usage.js';

const usage = '{"prompt_tokens":40000,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":38912}}';

describe('parseCompletionUsage', () => {
  it('reads a JSON response', () => {
    expect(parseCompletionUsage(`{"choices":[],"usage":${usage}}`, { sse: false, complete: true })).toEqual({
      promptTokens: 40000,
      cachedTokens: 38912,
    });
  });

  it('reads the usage chunk of an SSE stream, ignoring text that looks like usage', () => {
    const sse = `data: {"choices":[{"text":"\\"usage\\":{\\"prompt_tokens\\":1}"}]}\n\ndata: {"choices":[],"usage":${usage}}\n\ndata: [DONE]\n\n`;
    expect(parseCompletionUsage(sse, { sse: true, complete: true })).toEqual({
      promptTokens: 40000,
      cachedTokens: 38912,
    });
  });

  it('falls back to the last pair in a kept tail', () => {
    expect(
      parseCompletionUsage(`…"text":"\\"prompt_tokens\\":5"}],"usage":${usage}}`, { sse: false, complete: false }),
    ).toEqual({ promptTokens: 40000, cachedTokens: 38912 });
  });

  it.each([['{"usage":null}'], ['oops'], ['{"usage":{"prompt_tokens":-1}}']])('yields nulls for %s', (text) => {
    const u = parseCompletionUsage(text, { sse: false, complete: true });
    expect(u.cachedTokens).toBeNull();
  });
});
