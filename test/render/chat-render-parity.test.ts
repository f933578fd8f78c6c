// The JavaScript chat-template engine against the router's (Python jinja2 in transformers' environment), both encoded
// by Hugging Face's tokenizers binding: the ids kvsentinel computes for a chat request must be the router's.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderInputOf, routerTool, type RenderInput } from '../../src/core/render/render-input.js';
import { ModelTokenizer } from '../../src/sources/tokenizer/model-tokenizer.js';
import { DEEPSEEK_V3_DIR, deepseekConfig, deepseekVariant, renderWithJinja2 } from '../helpers/model-tokenizers.js';
import { CONVERSATIONS, TOOLS_TEMPLATE, type Conversation } from './conversations.js';

const BOS = '<｜begin▁of▁sentence｜>';

/** what the relay reads from a request body with this conversation (tools as the router dumps them) */
function chatInput(c: Conversation, kwargs: Record<string, unknown> = {}): Extract<RenderInput, { kind: 'chat' }> {
  const input = renderInputOf({
    messages: c.messages,
    ...(c.tools ? { tools: c.tools } : {}),
    ...(c.addGenerationPrompt !== undefined ? { add_generation_prompt: c.addGenerationPrompt } : {}),
    chat_template_kwargs: kwargs,
  });
  if (input?.kind !== 'chat') throw new Error('not a chat body');
  return input;
}

/** What the router computes: jinja2's render (variables as transformers passes them), encoded without special tokens. */
async function goldenIds(
  tokenizer: ModelTokenizer,
  template: string,
  c: Conversation,
  kwargs: Record<string, unknown> = {},
): Promise<{ text: string; ids: Uint32Array }> {
  const text = renderWithJinja2(template, {
    ...tokenizer.files.specialTokens,
    ...kwargs,
    messages: c.messages,
    // ChatCompletionRequest.tools after pydantic, then tool.model_dump() (router.py _tokenize)
    tools: c.tools?.map(routerTool) ?? null,
    documents: null,
    add_generation_prompt: c.addGenerationPrompt ?? true,
  });
  return { text, ids: await tokenizer.encodeWhole(text, false) };
}

describe('chat render parity with the router (DeepSeek-V3 tokenizer, jinja2 golden)', () => {
  const tokenizer = ModelTokenizer.load(DEEPSEEK_V3_DIR);
  const template = deepseekConfig()['chat_template'] as string;

  for (const c of CONVERSATIONS) {
    it(`${c.name}: same text and ids as jinja2 + tokenizers`, async () => {
      const golden = await goldenIds(tokenizer, template, c);
      expect(tokenizer.renderChat(chatInput(c))).toBe(golden.text);
      const ids = await tokenizer.render(chatInput(c));
      expect(Array.from(ids)).toEqual(Array.from(golden.ids));
      // the template writes BOS itself and the encode adds none: exactly one BOS, at position 0
      expect(ids[0]).toBe(tokenizer.bosId);
      expect(ids.filter((id) => id === tokenizer.bosId)).toHaveLength(1);
    });
  }

  it('the generation prompt is the only difference add_generation_prompt makes', async () => {
    const c = CONVERSATIONS[0]!;
    const on = await tokenizer.render(chatInput(c));
    const off = await tokenizer.render({ ...chatInput(c), addGenerationPrompt: false });
    expect(Array.from(on.subarray(0, off.length))).toEqual(Array.from(off));
    expect(on.length).toBe(off.length + 1);
    expect(tokenizer.tokenText(on[on.length - 1]!)).toBe('<｜Assistant｜>');
  });

  it('a text prompt gets BOS from add_bos_token (LlamaTokenizerFast rebuilds the post-processor)', async () => {
    const ids = await tokenizer.render({ kind: 'text', prompt: 'hello world' });
    expect(tokenizer.bosId).toBe(0);
    expect(Array.from(ids)).toEqual([0, ...(await tokenizer.encodeWhole('hello world', false))]);
    // a prompt already starting with the BOS text gets a second one, as transformers gives it
    const doubled = await tokenizer.render({ kind: 'text', prompt: `${BOS}hello world` });
    expect(Array.from(doubled.subarray(0, 2))).toEqual([0, 0]);
  });
});

describe('tools as the router passes them to the template (model_dump of ChatCompletionToolsParam)', () => {
  it('puts type then function with name, description, parameters, strict in declaration order, unset ones null', () => {
    const dumped = routerTool({ function: { parameters: { type: 'object' }, name: 'f' }, type: 'function' });
    expect(JSON.stringify(dumped)).toBe(
      '{"type":"function","function":{"name":"f","description":null,"parameters":{"type":"object"},"strict":null}}',
    );
    expect(routerTool('not a tool')).toBe('not a tool');
  });
});

describe('segment encoding (cached pieces between added tokens) equals the whole encode', () => {
  const tokenizer = ModelTokenizer.load(DEEPSEEK_V3_DIR);
  it('is enabled for DeepSeek-V3 (identity normalizer, byte-level pre-tokenizer, plain added tokens)', async () => {
    expect(await tokenizer.segmented()).toBe(true);
  });

  it("gives the whole encode's ids for every conversation, cold and from the cache, and for text around added tokens", async () => {
    const texts = CONVERSATIONS.map((c) => tokenizer.renderChat(chatInput(c)));
    texts.push(
      '<｜User｜>  spaces before<｜Assistant｜>\n\nnewlines after<｜end▁of▁sentence｜>x<｜User｜><｜User｜>',
      '',
      'no added token at all',
    );
    for (const pass of ['cold', 'cached']) {
      for (const text of texts)
        expect(Array.from(await tokenizer.encode(text, false)), `${pass}: ${text.slice(0, 40)}`).toEqual(
          Array.from(await tokenizer.encodeWhole(text, false)),
        );
    }
  });

  it('is not used for a Metaspace pre-tokenizer (its prepend scheme looks at offsets)', async () => {
    const dir = deepseekVariant((config) => config);
    const json = JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(
      join(dir, 'tokenizer.json'),
      JSON.stringify({
        ...json,
        pre_tokenizer: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'first', split: true },
      }),
    );
    expect(await ModelTokenizer.load(dir).segmented()).toBe(false);
  });
});

describe('a tool-aware template (tojson, loop controls, whitespace control, kwargs)', () => {
  const dir = deepseekVariant((config) => ({ ...config, chat_template: TOOLS_TEMPLATE }));
  const tokenizer = ModelTokenizer.load(dir);

  for (const c of CONVERSATIONS) {
    for (const kwargs of [{}, { thinking: true }]) {
      it(`${c.name}${Object.keys(kwargs).length > 0 ? ' with chat_template_kwargs' : ''}: same ids as jinja2`, async () => {
        const golden = await goldenIds(tokenizer, TOOLS_TEMPLATE, c, kwargs);
        expect(tokenizer.renderChat(chatInput(c, kwargs))).toBe(golden.text);
        expect(Array.from(await tokenizer.render(chatInput(c, kwargs)))).toEqual(Array.from(golden.ids));
      });
    }
  }

  it('raise_exception in the template is a render error, not a crash', async () => {
    await expect(
      tokenizer.render(chatInput({ name: 'bad', messages: [{ role: 'narrator', content: 'x' }] })),
    ).rejects.toThrow(/bad role narrator/);
  });
});
