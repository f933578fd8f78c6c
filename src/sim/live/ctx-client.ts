// The live orchestrator's client side towards CTX workers: the context_only request, its outcome, and errors worded
// as TensorRT-LLM's aiohttp client words them (the router's log lines quote them).
import type { Readable } from 'node:stream';
import type { Agent } from 'undici';
import { request as httpRequest } from 'undici';
import { parseUsage } from '../../core/wire/parse-usage.js';
import { ctxRequestIdOf, withoutPromptIds } from './ctx-request-body.js';

/** the context_only request, ready to send once */
export interface CtxRequest {
  readonly path: string;
  readonly body: Readable;
  readonly headers: Record<string, string>;
}

type CtxOutcome =
  | {
      readonly ok: true;
      readonly promptTokens: number;
      readonly cachedTokens: number;
      readonly ctxRequestId: string | null;
    }
  | { readonly ok: false; readonly error: string };

export function errorText(err: unknown, address: string): string {
  const code = (err as { code?: unknown }).code;
  if (code === 'ECONNREFUSED') {
    const [host, port] = address.split(/:(?=\d+$)/);
    return `Cannot connect to host ${address} ssl:default [Connect call failed ('${host}', ${port})]`;
  }
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return '';
  if (code === 'UND_ERR_SOCKET' || code === 'ECONNRESET') return 'Server disconnected';
  return err instanceof Error ? err.message : String(err);
}

/** POST the context_only request to a CTX worker; a failure is worded as TensorRT-LLM's aiohttp client words it. */
export async function sendCtx(
  agent: Agent,
  server: string,
  ctxRequest: CtxRequest,
  promptTokens: number,
  timeoutMs: number,
): Promise<CtxOutcome> {
  const { path, body, headers } = ctxRequest;
  const timeout = timeoutMs;
  try {
    const res = await httpRequest(`http://${server}${path}`, {
      method: 'POST',
      body,
      headers,
      dispatcher: agent,
      headersTimeout: timeout,
      bodyTimeout: timeout,
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) return { ok: false, error: `${res.statusCode} ${text.slice(0, 200)}` };
    const slim = withoutPromptIds(text);
    const usage = parseUsage(slim).value;
    return {
      ok: true,
      promptTokens: usage?.promptTokens ?? promptTokens,
      cachedTokens: usage?.cachedTokens ?? 0,
      ctxRequestId: ctxRequestIdOf(slim),
    };
  } catch (err) {
    return { ok: false, error: errorText(err, server) };
  }
}
