// The render thread as it runs in the product: the compiled pool in dist/ (npm test builds it first), whose thread
// file exists. It must give the inline render's ids for many concurrent requests, and bound what waits.
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { encode } from '@msgpack/msgpack';
import { describe, expect, it } from 'vitest';
import { renderInputOf } from '../../src/core/render/render-input.js';
import type * as PoolModule from '../../src/sources/tokenizer/render-pool.js';
import type * as TokenizerModule from '../../src/sources/tokenizer/model-tokenizer.js';
import { DEEPSEEK_V3_DIR } from '../helpers/model-tokenizers.js';
import { CONVERSATIONS } from '../render/conversations.js';

const dist = (rel: string): string => fileURLToPath(new URL(`../../dist/sources/tokenizer/${rel}`, import.meta.url));

async function load<T>(rel: string): Promise<T> {
  if (!existsSync(dist(rel))) throw new Error(`${dist(rel)} is missing: run npm run build (npm test does) first`);
  return (await import(pathToFileURL(dist(rel)).href)) as T;
}

describe('RenderPool on its worker thread', () => {
  it('renders concurrent chat and text bodies (JSON and msgpack) exactly as inline, ids transferred back', async () => {
    const { RenderPool } = await load<typeof PoolModule>('render-pool.js');
    const { ModelTokenizer } = await load<typeof TokenizerModule>('model-tokenizer.js');
    const tokenizer = ModelTokenizer.load(DEEPSEEK_V3_DIR);
    const pool = new RenderPool({ tokenizer, thread: true, maxPending: 1000 });
    expect(pool.threaded).toBe(true);
    try {
      const bodies = Array.from({ length: 40 }, (_, i) => {
        const c = CONVERSATIONS[i % CONVERSATIONS.length]!;
        return i % 4 === 3
          ? { model: 'm', prompt: `request ${i}: ${c.name}` }
          : { model: 'm', messages: c.messages, ...(c.tools ? { tools: c.tools } : {}) };
      });
      const answers = await Promise.all(
        bodies.map((b, i) =>
          pool.render(
            i % 2 === 0 ? new TextEncoder().encode(JSON.stringify(b)) : encode(b),
            i % 2 === 0 ? 'json' : 'msgpack',
          ),
        ),
      );
      for (let i = 0; i < bodies.length; i++) {
        const expected = await tokenizer.render(renderInputOf(bodies[i])!);
        const got = answers[i]!;
        expect(got.kind, `body ${i}`).toBe('rendered');
        if (got.kind === 'rendered') expect([...got.ids], `body ${i}`).toEqual([...expected]);
      }
      expect((await pool.render(new TextEncoder().encode('{"prompt": [1, 2]}'), 'json')).kind).toBe('none');
      expect(await pool.render(new TextEncoder().encode('{not json'), 'json')).toMatchObject({
        kind: 'failed',
        reason: 'undecodable',
      });
    } finally {
      await pool.close();
    }
  });

  it('answers busy past maxPending instead of queueing without bound', async () => {
    const { RenderPool } = await load<typeof PoolModule>('render-pool.js');
    const { ModelTokenizer } = await load<typeof TokenizerModule>('model-tokenizer.js');
    const pool = new RenderPool({ tokenizer: ModelTokenizer.load(DEEPSEEK_V3_DIR), thread: true, maxPending: 2 });
    try {
      const body = new TextEncoder().encode(
        JSON.stringify({ messages: [{ role: 'user', content: 'x '.repeat(20_000) }] }),
      );
      const answers = await Promise.all([
        pool.render(body, 'json'),
        pool.render(body, 'json'),
        pool.render(body, 'json'),
      ]);
      expect(answers.map((a) => a.kind)).toEqual(['rendered', 'rendered', 'failed']);
      expect(answers[2]).toMatchObject({ reason: 'busy' });
    } finally {
      await pool.close();
    }
  });
});
