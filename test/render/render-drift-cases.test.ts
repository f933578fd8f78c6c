// compareRenders on real renders of the DeepSeek-V3 tokenizer: each way a router's ids drift from a worker's gives
// the first diverging position and the cause an operator must fix.
import { describe, expect, it } from 'vitest';
import { compareRenders, matchableShare, type RenderContext } from '../../src/core/render/compare-renders.js';
import type { RenderInput } from '../../src/core/render/render-input.js';
import { ModelTokenizer } from '../../src/sources/tokenizer/model-tokenizer.js';
import { DEEPSEEK_V3_DIR, deepseekVariant } from '../helpers/model-tokenizers.js';
import { CONVERSATIONS, TOOLS_TEMPLATE } from './conversations.js';

const tokenizer = ModelTokenizer.load(DEEPSEEK_V3_DIR);
const context = (hasTools = false): RenderContext => ({
  bosId: tokenizer.bosId,
  hasTools,
  tokenText: (id) => tokenizer.tokenText(id),
});
const multiTurn = CONVERSATIONS[1]!;
const chat = (over: Partial<Extract<RenderInput, { kind: 'chat' }>> = {}): Extract<RenderInput, { kind: 'chat' }> => ({
  kind: 'chat',
  messages: multiTurn.messages,
  tools: null,
  addGenerationPrompt: true,
  chatTemplateKwargs: {},
  ...over,
});

describe('render drift on real renders', () => {
  it('the same render is no drift', async () => {
    const ids = await tokenizer.render(chat());
    expect(compareRenders(ids, Uint32Array.from(ids), context())).toBeNull();
  });

  it('doubled BOS on the router (rendered string encoded with special tokens): position 1, doubled-bos, router side', async () => {
    const worker = await tokenizer.render(chat());
    const router = await tokenizer.encodeText(tokenizer.renderChat(chat()));
    const diff = compareRenders(router, worker, context())!;
    expect(diff).toMatchObject({ position: 1, cause: 'doubled-bos', side: 'router', routerSpan: 1, workerSpan: 0 });
    expect(diff.routerWindow.slice(0, 3)).toEqual([0, 0, worker[1]]);
    expect(diff.commonSuffix).toBe(worker.length - 1);
    // nothing the router looks up can match
    expect(matchableShare(diff, 32)).toBe(0);
  });

  it('doubled BOS on the worker side is named as such', async () => {
    const router = await tokenizer.render(chat());
    const worker = await tokenizer.encodeText(tokenizer.renderChat(chat()));
    expect(compareRenders(router, worker, context())).toMatchObject({
      position: 1,
      cause: 'doubled-bos',
      side: 'worker',
    });
  });

  it('a BOS only one side adds: missing-bos on the other', async () => {
    const worker = await tokenizer.render(chat());
    const router = worker.subarray(1);
    expect(compareRenders(router, worker, context())).toMatchObject({
      position: 0,
      cause: 'missing-bos',
      side: 'router',
    });
  });

  it('add_generation_prompt off on the router: the difference is the tail only', async () => {
    const worker = await tokenizer.render(chat());
    const router = await tokenizer.render(chat({ addGenerationPrompt: false }));
    const diff = compareRenders(router, worker, context())!;
    expect(diff).toMatchObject({
      position: router.length,
      cause: 'generation-prompt',
      side: 'worker',
      routerSpan: 0,
      workerSpan: 1,
      commonSuffix: 0,
    });
    // every block but the one holding the last prompt token still matches
    expect(matchableShare(diff, 4)).toBeGreaterThan(0.8);
  });

  it('a tool schema rendered on one side only: tools, on the side that rendered it', async () => {
    const tools = ModelTokenizer.load(deepseekVariant((config) => ({ ...config, chat_template: TOOLS_TEMPLATE })));
    const withTools = { ...chat(), tools: CONVERSATIONS[2]!.tools! };
    const router = await tools.render(withTools);
    const worker = await tools.render({ ...withTools, tools: null });
    const diff = compareRenders(router, worker, { ...context(true), tokenText: (id) => tools.tokenText(id) })!;
    // right after BOS and the role marker's shared opening ids
    expect(diff).toMatchObject({ cause: 'tools', side: 'router', workerSpan: 0 });
    expect(diff.position).toBeGreaterThan(0);
    expect(diff.position).toBeLessThan(8);
    expect(diff.routerSpan).toBeGreaterThan(20);
    expect(diff.commonSuffix).toBe(worker.length - diff.position);
  });

  it('spaces tokenized differently (a Metaspace pre-tokenizer that drops them): space-handling', async () => {
    const text = tokenizer.renderChat(chat());
    const router = await tokenizer.encode(text, false);
    const worker = await tokenizer.encode(text.replace(/ /g, ''), false);
    expect(compareRenders(router, worker, context())).toMatchObject({ cause: 'space-handling', side: null });
  });

  it('a different template version: template', async () => {
    const v2 = ModelTokenizer.load(
      deepseekVariant((config) => ({
        ...config,
        chat_template: (config['chat_template'] as string).replace("'<｜User｜>'", "'<｜User｜>\\n'"),
      })),
    );
    const router = await v2.render(chat());
    const worker = await tokenizer.render(chat());
    const diff = compareRenders(router, worker, context())!;
    expect(diff.cause).toBe('template');
    expect(diff.position).toBeGreaterThan(1);
  });
});

describe("compareRenders without a tokenizer (ids a request carried vs the worker's)", () => {
  const bare: RenderContext = { bosId: null, hasTools: false, tokenText: null };
  it('a repeated first id is a doubled BOS', () => {
    expect(compareRenders([7, 7, 1, 2, 3], [7, 1, 2, 3], bare)).toMatchObject({
      position: 1,
      cause: 'doubled-bos',
      side: 'router',
    });
  });
  it('a one-sided tail is the generation prompt', () => {
    expect(compareRenders([7, 1, 2, 3], [7, 1, 2, 3, 9], bare)).toMatchObject({
      position: 4,
      cause: 'generation-prompt',
      side: 'worker',
    });
  });
  it('anything else is a template or tokenizer difference, with both windows', () => {
    const diff = compareRenders([1, 2, 3, 4, 5, 6], [1, 2, 3, 9, 5, 6], bare)!;
    expect(diff).toMatchObject({
      position: 3,
      cause: 'template',
      routerSpan: 1,
      workerSpan: 1,
      commonSuffix: 2,
      windowFrom: 0,
    });
    expect(diff.routerWindow).toEqual([1, 2, 3, 4, 5, 6]);
    expect(diff.workerWindow).toEqual([1, 2, 3, 9, 5, 6]);
  });
});
