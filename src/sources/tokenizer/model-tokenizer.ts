// The model's own tokenizer and chat template, called the way TensorRT-LLM's router calls them
// (`BlockHashMixin._tokenize` through transformers): Hugging Face's Rust `tokenizers` pipeline from tokenizer.json
// (the same implementation as the router's fast tokenizer, and the pipeline `maybe_fix_byte_level_tokenizer`
// restores for DeepSeek-V3) and the chat template rendered by `@huggingface/jinja`, which follows transformers'
// jinja environment (trim_blocks, lstrip_blocks, raise_exception, strftime_now, tojson).
// - chat: apply_chat_template(messages, add_generation_prompt, tools, **chat_template_kwargs) with the special tokens
//   as template variables, the string encoded without special tokens;
// - text: tokenizer(prompt)["input_ids"]: special tokens added, by tokenizer.json's post-processor, or — for the
//   Llama-family classes transformers rebuilds it for — BOS / EOS by add_bos_token / add_eos_token (default BOS on).
import { Template } from '@huggingface/jinja';
import tokenizers from 'tokenizers';
import type { RenderInput } from '../../core/render/render-input.js';
import { SegmentEncoder } from './segment-encoder.js';
import { readTokenizerFiles, TokenizerFileError, type ChatTemplates, type TokenizerFiles } from './tokenizer-files.js';
import { KvsentinelError } from '../../core/errors.js';

/** transformers classes whose constructor replaces the post-processor by BOS/EOS from add_bos_token/add_eos_token */
const REBUILDS_POST_PROCESSOR = /^(Llama|CodeLlama|Gemma|Cohere|GPTNeoX)Tokenizer(Fast)?$/;

export class RenderError extends KvsentinelError {
  override readonly name = 'RenderError';
  /** a short, bounded reason for counters ('no-chat-template', 'template-error', …) */
  readonly reason: string;
  constructor(reason: string, message: string) {
    super('render-failed', message);
    this.reason = reason;
  }
}

export class ModelTokenizer {
  readonly files: TokenizerFiles;
  readonly bosId: number | null;
  readonly #tokenizer: tokenizers.Tokenizer;
  readonly #templates: ReadonlyMap<string, Template> | Template | null;
  /** ids added around a text prompt when transformers' post-processor is rebuilt; null: tokenizer.json decides */
  readonly #textSpecials: { readonly bos: number | null; readonly eos: number | null } | null;
  #segments: Promise<SegmentEncoder | null> | undefined;

  private constructor(files: TokenizerFiles, tokenizer: tokenizers.Tokenizer) {
    this.files = files;
    this.#tokenizer = tokenizer;
    const idOf = (name: string): number | null => {
      const s = files.specialTokens[name];
      return s === undefined ? null : tokenizer.tokenToId(s);
    };
    this.bosId = idOf('bos_token');
    this.#templates = compileTemplates(files.chatTemplateFile, files.chatTemplate);
    if (files.tokenizerClass !== null && REBUILDS_POST_PROCESSOR.test(files.tokenizerClass)) {
      const addBos = files.addBosToken ?? true;
      const addEos = files.addEosToken ?? false;
      const file = files.configFile ?? files.tokenizerJson;
      if (addBos && this.bosId === null)
        throw new TokenizerFileError(file, 'add_bos_token is true but bos_token is not in the vocabulary');
      const eosId = idOf('eos_token');
      if (addEos && eosId === null)
        throw new TokenizerFileError(file, 'add_eos_token is true but eos_token is not in the vocabulary');
      this.#textSpecials = { bos: addBos ? this.bosId : null, eos: addEos ? eosId : null };
    } else {
      this.#textSpecials = null;
    }
  }

  /** Loads and checks PATH (a model folder or its tokenizer.json); throws TokenizerFileError naming the file. */
  static load(path: string): ModelTokenizer {
    const files = readTokenizerFiles(path);
    let tokenizer: tokenizers.Tokenizer;
    try {
      tokenizer = tokenizers.Tokenizer.fromFile(files.tokenizerJson);
    } catch (err) {
      throw new TokenizerFileError(
        files.tokenizerJson,
        `the tokenizers library cannot load it: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    return new ModelTokenizer(files, tokenizer);
  }

  /**
   * load, with a bad folder or file refused as the caller's configuration error (`refuse` names the flag or key
   * that gave PATH); anything else still throws as it is.
   */
  static loadOrRefuse(path: string, refuse: (err: TokenizerFileError) => Error): ModelTokenizer {
    try {
      return ModelTokenizer.load(path);
    } catch (err) {
      if (err instanceof TokenizerFileError) throw refuse(err);
      throw err;
    }
  }

  get hasChatTemplate(): boolean {
    return this.#templates !== null;
  }

  /** A token's vocabulary string (for classifying a difference; never exported). */
  tokenText(id: number): string | null {
    return this.#tokenizer.idToToken(id);
  }

  /** The ids the router hashes for this request. Throws RenderError when it cannot be rendered. */
  async render(input: RenderInput): Promise<Uint32Array> {
    if (input.kind === 'text') return this.encodeText(input.prompt);
    return this.encode(this.renderChat(input), false);
  }

  /** The chat template's output (the string apply_chat_template(..., tokenize=False) returns). */
  renderChat(input: Extract<RenderInput, { kind: 'chat' }>): string {
    const template = this.#template(input.tools !== null);
    try {
      return template.render({
        ...this.files.specialTokens,
        ...input.chatTemplateKwargs,
        messages: input.messages,
        tools: input.tools,
        documents: null,
        add_generation_prompt: input.addGenerationPrompt,
      });
    } catch (err) {
      throw new RenderError(
        'template-error',
        `chat template (${this.files.chatTemplateFile ?? '?'}): ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }

  /** tokenizer(prompt)["input_ids"] */
  async encodeText(prompt: string): Promise<Uint32Array> {
    const specials = this.#textSpecials;
    if (specials === null) return this.encode(prompt, true);
    const ids = await this.encode(prompt, false);
    const head = specials.bos !== null ? 1 : 0;
    const out = new Uint32Array(ids.length + head + (specials.eos !== null ? 1 : 0));
    if (specials.bos !== null) out[0] = specials.bos;
    out.set(ids, head);
    if (specials.eos !== null) out[out.length - 1] = specials.eos;
    return out;
  }

  /** The ids of `text`; without special tokens by segments between added tokens, cached (SegmentEncoder) when exact. */
  async encode(text: string, addSpecialTokens: boolean): Promise<Uint32Array> {
    if (!addSpecialTokens) {
      const segments = await (this.#segments ??= SegmentEncoder.create(this.#tokenizer, this.files));
      if (segments !== null) return segments.encode(text);
    }
    return this.encodeWhole(text, addSpecialTokens);
  }

  /** The tokenizers library's encode of the whole string, in one call. */
  async encodeWhole(text: string, addSpecialTokens: boolean): Promise<Uint32Array> {
    const encoding = await this.#tokenizer.encode(text, null, { addSpecialTokens });
    return Uint32Array.from(encoding.getIds());
  }

  /** Whether prompts are encoded by cached segments (false: whole, the tokenizer's files do not allow it). */
  async segmented(): Promise<boolean> {
    return (await (this.#segments ??= SegmentEncoder.create(this.#tokenizer, this.files))) !== null;
  }

  /** transformers' get_chat_template: one template, or by name ("tool_use" when tools are given, else "default"). */
  #template(withTools: boolean): Template {
    const t = this.#templates;
    if (t === null)
      throw new RenderError(
        'no-chat-template',
        `${this.files.configFile ?? this.files.tokenizerJson}: no chat_template, so chat requests cannot be rendered`,
      );
    if (t instanceof Template) return t;
    const chosen = (withTools ? t.get('tool_use') : undefined) ?? t.get('default');
    if (chosen === undefined)
      throw new RenderError(
        'no-chat-template',
        `${this.files.chatTemplateFile ?? '?'}: no "default" chat template among ${[...t.keys()].join(', ')}`,
      );
    return chosen;
  }
}

function compileTemplates(
  file: string | null,
  templates: ChatTemplates | null,
): ReadonlyMap<string, Template> | Template | null {
  if (templates === null) return null;
  const compile = (source: string, name: string | null): Template => {
    try {
      return new Template(source);
    } catch (err) {
      throw new TokenizerFileError(
        file ?? '?',
        `chat_template${name !== null ? ` "${name}"` : ''} does not parse: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  };
  if (typeof templates === 'string') return compile(templates, null);
  const out = new Map<string, Template>();
  for (const [name, source] of templates) out.set(name, compile(source, name));
  return out;
}
