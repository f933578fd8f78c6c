import { describe, expect, it } from 'vitest';
import { tokenIdsBody } from './live-workload.js';

describe('tokenIdsBody', () => {
  it('writes the ids as the JSON array a completions request carries, every digit count included', () => {
    const ids = [0, 7, 10, 99, 100, 4_321, 10_000, 99_999, 100_000, 129_279, 1_000_000, 4_294_967_295];
    const body = tokenIdsBody(Uint32Array.from(ids), 260);
    expect(JSON.parse(body.toString('utf8'))).toEqual({ model: 'kvsentinel-sim', prompt: ids, max_tokens: 260 });
    // sized exactly: nothing left unwritten at the end of the buffer
    expect(body.toString('utf8').endsWith('"max_tokens":260}')).toBe(true);
  });

  it('writes an empty prompt as []', () => {
    expect(JSON.parse(tokenIdsBody(new Uint32Array(0), 1).toString('utf8'))).toEqual({
      model: 'kvsentinel-sim',
      prompt: [],
      max_tokens: 1,
    });
  });
});
