// Real tokenizers in the live simulator (ctx.tokenizer, router.tokenizer): the workers tokenize text and chat
// requests as trtllm-serve does with the model's tokenizer and chat template (and return their prompt_token_ids),
// and the router renders them itself as TensorRT-LLM's BlockHashMixin does, so render drift shows end to end.
// One tokenizer per folder, loaded before any server starts; a bad folder is refused naming the key and the file.
import { renderInputOf } from '../../core/render/render-input.js';
import { ModelTokenizer } from '../../sources/tokenizer/model-tokenizer.js';
import { SimConfigError, type SimConfig } from '../sim-config.js';
import type { OpenAiRequest } from './openai-request.js';

export interface SimTokenizers {
  readonly ctx: ModelTokenizer | null;
  readonly router: ModelTokenizer | null;
}

export function loadSimTokenizers(config: SimConfig): SimTokenizers {
  const loaded = new Map<string, ModelTokenizer>();
  const load = (key: string, path: string | null | undefined): ModelTokenizer | null => {
    if (path === null || path === undefined) return null;
    const known = loaded.get(path);
    if (known !== undefined) return known;
    const t = ModelTokenizer.loadOrRefuse(
      path,
      (err) => new SimConfigError(`--set ${key}=${path}: ${err.message}`, 'tokenizer-invalid'),
    );
    loaded.set(path, t);
    return t;
  };
  // one side set: the other uses the same tokenizer (a router and workers of one model), drift needs both stated
  const ctx = load('ctx.tokenizer', config.ctx.tokenizer);
  const router = load('router.tokenizer', config.router.tokenizer);
  return { ctx: ctx ?? router, router: router ?? ctx };
}

/** The ids `tokenizer` gives a parsed request (token-id prompts stay as sent). */
export async function tokenizeRequest(tokenizer: ModelTokenizer, request: OpenAiRequest): Promise<Uint32Array> {
  const input =
    request.endpoint === 'chat'
      ? renderInputOf(request.body)
      : request.promptJson !== null && request.promptJson.startsWith('"')
        ? renderInputOf({ prompt: JSON.parse(request.promptJson) as string })
        : null;
  return input === null ? request.tokens : tokenizer.render(input);
}
