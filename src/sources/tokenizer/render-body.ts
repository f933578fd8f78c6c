// One CTX request body → the ids the router hashes for it, with the model's tokenizer (shared by the render thread
// and the inline fallback). Requests that carry ids or have nothing to render answer `none`.
import type { CtxBodyEncoding } from '../../core/relay/ctx-body-encoding.js';
import { ctxBodyValue } from '../../core/render/ctx-body-value.js';
import { renderInputOf } from '../../core/render/render-input.js';
import { RenderError, type ModelTokenizer } from './model-tokenizer.js';

export type RenderOutcome =
  | { readonly kind: 'rendered'; readonly ids: Uint32Array; readonly hasTools: boolean }
  | { readonly kind: 'none' }
  /** `reason` is bounded (metric label): undecodable, no-chat-template, template-error, tokenizer-error, busy */
  | { readonly kind: 'failed'; readonly reason: string; readonly message: string };

export async function renderBody(
  tokenizer: ModelTokenizer,
  bytes: Uint8Array,
  encoding: CtxBodyEncoding,
): Promise<RenderOutcome> {
  const body = ctxBodyValue(bytes, encoding);
  if (body === null)
    return { kind: 'failed', reason: 'undecodable', message: `a ${encoding} body that does not decode` };
  const input = renderInputOf(body);
  if (input === null) return { kind: 'none' };
  try {
    const ids = await tokenizer.render(input);
    return { kind: 'rendered', ids, hasTools: input.kind === 'chat' && input.tools !== null };
  } catch (err) {
    if (err instanceof RenderError) return { kind: 'failed', reason: err.reason, message: err.message };
    return { kind: 'failed', reason: 'tokenizer-error', message: err instanceof Error ? err.message : String(err) };
  }
}
