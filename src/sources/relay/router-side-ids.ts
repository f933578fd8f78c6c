// The relay's render-parity step (docs/trtllm-wire.md §7.3): the ids the router hashes for a CTX request — carried by
// the request, or kvsentinel's render of a text or chat request with the model's tokenizer (RenderPool, off the
// event loop) — and, once the worker answered with its own prompt_token_ids, their comparison.
import type { CtxBodyEncoding } from '../../core/relay/ctx-body-encoding.js';
import type { CtxRequestInfo } from '../../core/relay/ctx-request.js';
import { compareRenders } from '../../core/render/compare-renders.js';
import type { RenderCheckObservation } from '../../core/observe/observation.js';
import type { RenderPool } from '../tokenizer/render-pool.js';

export interface RouterSideIds {
  readonly ids: Uint32Array;
  readonly from: 'request' | 'tokenizer';
  readonly hasTools: boolean;
}

/** What became of a text or chat request's render (the exporter's counter). */
export type RenderResult = 'rendered' | 'failed';

/**
 * The request info with the router-side ids filled in when the relay has a tokenizer and the request carries none,
 * and those ids. `bytes` is called only when a render is needed.
 */
export async function withRouterSideIds(
  info: CtxRequestInfo,
  render: RenderPool | undefined,
  bytes: () => Uint8Array,
  encoding: CtxBodyEncoding,
  onRender?: (result: RenderResult, reason: string | null) => void,
): Promise<{ readonly info: CtxRequestInfo; readonly routerIds: RouterSideIds | null }> {
  if (info.promptTokens !== null)
    return { info, routerIds: { ids: info.promptTokens, from: 'request', hasTools: false } };
  if (render === undefined || (info.promptForm !== 'chat' && info.promptForm !== 'text'))
    return { info, routerIds: null };
  const outcome = await render.render(bytes(), encoding);
  if (outcome.kind === 'rendered') {
    onRender?.('rendered', null);
    return {
      info: { ...info, promptTokens: outcome.ids },
      routerIds: { ids: outcome.ids, from: 'tokenizer', hasTools: outcome.hasTools },
    };
  }
  if (outcome.kind === 'failed') onRender?.('failed', outcome.reason);
  return { info, routerIds: null };
}

/** The render-check of a request whose router-side ids and worker ids are both known; null otherwise. */
export function renderCheckOf(
  at: { readonly ts: number; readonly requestId: string; readonly server: string },
  routerIds: RouterSideIds | null,
  workerIds: Uint32Array | null | undefined,
  render: RenderPool | undefined,
): RenderCheckObservation | null {
  if (routerIds === null || workerIds === null || workerIds === undefined) return null;
  const tokenizer = render?.tokenizer;
  const diff = compareRenders(routerIds.ids, workerIds, {
    bosId: tokenizer?.bosId ?? null,
    hasTools: routerIds.hasTools,
    tokenText: tokenizer !== undefined ? (id) => tokenizer.tokenText(id) : null,
  });
  return {
    kind: 'render-check',
    ts: at.ts,
    requestId: at.requestId,
    server: at.server,
    routerIds: routerIds.from,
    promptTokens: routerIds.ids.length,
    diff,
  };
}
