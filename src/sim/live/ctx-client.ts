// The live orchestrator's client side towards CTX workers: /server_info at start-up, the context_only request and its
// outcome, the event polls, /perf_metrics; errors worded as TensorRT-LLM's aiohttp client words them (the router's log
// lines quote them).
import { KvsentinelError } from '../../core/errors.js';
import type { Readable } from 'node:stream';
import type { Agent } from 'undici';
import { request as httpRequest } from 'undici';
import type { KvEvent } from '../../core/wire/kv-event.js';
import { parseKvEvents } from '../../core/wire/parse-kv-events.js';
import { parseServerInfo, type ServerInfo } from '../../core/wire/parse-server-info.js';
import { parseUsage } from '../../core/wire/parse-usage.js';
import type { WireIssue } from '../../core/wire/wire-issue.js';
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

/** GET {address}/server_info until it answers 200 with a server info, or `timeoutMs` (real ms) has passed. */
export async function fetchServerInfo(agent: Agent, address: string, timeoutMs: number): Promise<ServerInfo> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    try {
      const res = await httpRequest(`http://${address}/server_info`, {
        dispatcher: agent,
        headersTimeout: 5000,
        bodyTimeout: 5000,
      });
      const text = await res.body.text();
      const parsed = parseServerInfo(text).value;
      if (res.statusCode === 200 && parsed !== null) return parsed;
    } catch (err) {
      if (performance.now() > deadline)
        throw new KvsentinelError(
          'source-unreachable',
          `CTX server ${address}: /server_info unreachable (${errorText(err, address)})`,
          {
            cause: err,
          },
        );
    }
    if (performance.now() > deadline)
      throw new KvsentinelError('source-unreachable', `CTX server ${address}: /server_info did not answer 200`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export type PollOutcome = { readonly events: KvEvent[] } | { readonly error: string };

/**
 * POST {server}/kv_cache_events, parsed losslessly (the issues go to `onIssues`); `reset` closes the connection
 * after it (router.poll_new_connection: the next poll comes from a new port).
 */
export async function pollKvEvents(
  agent: Agent,
  server: string,
  reset: boolean,
  onIssues: (issues: readonly WireIssue[]) => void,
): Promise<PollOutcome> {
  try {
    const res = await httpRequest(`http://${server}/kv_cache_events`, {
      method: 'POST',
      dispatcher: agent,
      headersTimeout: 30_000,
      bodyTimeout: 30_000,
      reset,
    });
    const text = await res.body.text();
    if (res.statusCode !== 200)
      return { error: `${res.statusCode}, message='${text.slice(0, 200)}', url='http://${server}/kv_cache_events'` };
    const parsed = parseKvEvents(text);
    if (parsed.issues.length > 0) onIssues(parsed.issues);
    return { events: parsed.events.map((p) => p.event) };
  } catch (err) {
    return { error: errorText(err, server) };
  }
}

/** GET {server}/perf_metrics: its body, or null when it does not answer 200 */
export async function fetchPerfMetrics(agent: Agent, server: string): Promise<string | null> {
  const res = await httpRequest(`http://${server}/perf_metrics`, {
    dispatcher: agent,
    headersTimeout: 10_000,
    bodyTimeout: 10_000,
  });
  const text = await res.body.text();
  return res.statusCode === 200 ? text : null;
}
