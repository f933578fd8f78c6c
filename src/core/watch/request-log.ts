// Request logs, one JSON object per line (docs/design.md §9). Canonical fields: ts, request_id, correlation_id,
// ctx_server, prompt_tokens, cached_tokens, optional prompt_token_ids (block_hashes are accepted and ignored for
// now). Presets: TensorRT-LLM disaggregated /perf_metrics entries (ctx_server; prompt and cached in the worker's
// blocks, num_total_allocated_blocks and num_reused_blocks, which the state turns into tokens), OpenAI responses (usage.prompt_tokens_details.cached_tokens; a context-only response's
// prompt_token_ids or prompt_token_ids_b64 are the worker's own ids: outcome.workerPromptTokens), kvsentinel relay
// records (canonical). `auto` picks the preset per line. Each line yields a decision and its outcome, or one issue.
import type { Observation } from '../observe/observation.js';
import { decodeTokenIdsB64 } from '../relay/ctx-response.js';
import { FieldReader } from '../wire/json-fields.js';
import { isJsonObject, parseLosslessJson, type JsonObject } from '../wire/lossless-json.js';
import { readPerfMetricsEntry } from '../wire/parse-perf-metrics.js';
import type { WireIssue } from '../wire/wire-issue.js';
import { toEpochMs } from './router-debug.js';
import type { ServerResolver } from './server-resolver.js';

export type RequestLogPreset = 'canonical' | 'perf-metrics' | 'openai' | 'relay';

export interface RequestLogContext {
  readonly now: number;
  readonly resolve: ServerResolver;
}

export interface RequestLogLine {
  readonly observations: Observation[];
  /** the first problem of a line that yielded nothing; messages carry the line number */
  readonly issue: WireIssue | null;
}

function lineIssue(lineNo: number, issue: WireIssue): RequestLogLine {
  return { observations: [], issue: { ...issue, message: `line ${lineNo}: ${issue.message}` } };
}

function tokensOf(v: unknown): Uint32Array | null {
  if (!Array.isArray(v)) return null;
  const out = new Uint32Array(v.length);
  for (let i = 0; i < v.length; i++) {
    const t: unknown = v[i];
    if (typeof t !== 'bigint' || t < 0n || t > 0xffff_ffffn) return null;
    out[i] = Number(t);
  }
  return out;
}

function detect(o: JsonObject): RequestLogPreset {
  if ('ctx_perf_metrics' in o || 'perf_metrics' in o) return 'perf-metrics';
  if ('usage' in o && !('cached_tokens' in o)) return 'openai';
  return 'canonical';
}

/** a response's worker ids: prompt_token_ids (first list of several) or prompt_token_ids_b64; null when absent */
function workerIdsOf(o: JsonObject): Uint32Array | null {
  const b64 = o['prompt_token_ids_b64'];
  if (typeof b64 === 'string') return decodeTokenIdsB64(b64);
  const ids = o['prompt_token_ids'];
  return Array.isArray(ids) ? tokensOf(Array.isArray(ids[0]) ? ids[0] : ids) : null;
}

function pair(
  ts: number,
  requestId: string,
  correlationId: string | null,
  server: string,
  promptTokens: number | null,
  cachedTokens: number | null,
  promptIds: Uint32Array | null,
  ok: boolean,
  latencyMs: number | null,
  workerIds: Uint32Array | null = null,
  workerBlocks: { readonly prompt: number | null; readonly cached: number | null } | null = null,
): Observation[] {
  return [
    {
      kind: 'decision',
      ts,
      requestId,
      correlationId,
      server,
      promptTokens: promptIds,
      promptTokenCount: promptIds?.length ?? promptTokens,
      inflight: null,
      ...(workerBlocks !== null ? { promptBlocks: workerBlocks.prompt } : {}),
    },
    {
      kind: 'outcome',
      ts,
      requestId,
      server,
      ok,
      promptTokens,
      cachedTokens,
      latencyMs,
      ...(workerBlocks !== null ? { promptBlocks: workerBlocks.prompt, cachedBlocks: workerBlocks.cached } : {}),
      ...(workerIds !== null ? { workerPromptTokens: workerIds } : {}),
    },
  ];
}

export function parseRequestLogLine(
  line: string,
  lineNo: number,
  format: RequestLogPreset | 'auto',
  ctx: RequestLogContext,
): RequestLogLine {
  const parsed = parseLosslessJson(line);
  const fatal = parsed.issues.find((i) => i.code !== 'duplicate-key');
  if (parsed.value === undefined || fatal !== undefined)
    return lineIssue(lineNo, fatal ?? { code: 'invalid-json', message: 'not JSON', path: '$', offset: 0 });
  const o = parsed.value;
  if (!isJsonObject(o))
    return lineIssue(lineNo, {
      code: 'wrong-type',
      message: 'a request log line must be a JSON object',
      path: '$',
      offset: 0,
    });
  const issues: WireIssue[] = [];
  const read = new FieldReader(line, issues);
  const preset = format === 'auto' ? detect(o) : format;
  const first = (): RequestLogLine => lineIssue(lineNo, issues[0] as WireIssue);

  switch (preset) {
    case 'canonical':
    case 'relay': {
      const requestId = read.id(o, 'request_id', []);
      const server = read.str(o, 'ctx_server', []);
      if (requestId === null || server === null) {
        if (issues.length === 0) read.issue('missing-field', 'request_id and ctx_server are required', []);
        return first();
      }
      const tsRaw = o['ts'];
      const ts =
        typeof tsRaw === 'string'
          ? Date.parse(tsRaw)
          : typeof tsRaw === 'bigint' || typeof tsRaw === 'number'
            ? toEpochMs(Number(tsRaw))
            : ctx.now;
      const ids = o['prompt_token_ids'] === undefined ? null : tokensOf(o['prompt_token_ids']);
      if (o['prompt_token_ids'] !== undefined && ids === null)
        read.issue('bad-token-ids', 'prompt_token_ids must be integers 0..2^32-1', ['prompt_token_ids']);
      const ok = o['ok'] === undefined ? true : o['ok'] === true;
      const out = pair(
        Number.isFinite(ts) ? ts : ctx.now,
        String(requestId),
        read.str(o, 'correlation_id', []),
        ctx.resolve(server),
        read.uint(o, 'prompt_tokens', []),
        read.uint(o, 'cached_tokens', []),
        ids,
        ok,
        read.num(o, 'latency_ms', []),
      );
      return {
        observations: out,
        issue:
          issues.length > 0
            ? { ...(issues[0] as WireIssue), message: `line ${lineNo}: ${(issues[0] as WireIssue).message}` }
            : null,
      };
    }
    case 'perf-metrics': {
      const entry = readPerfMetricsEntry(read, o, []);
      if (entry.kind !== 'disagg' || entry.ctxServer === null) {
        read.issue('no-server', 'a perf-metrics line needs ctx_server (disaggregated /perf_metrics entries)', []);
        return first();
      }
      const server = ctx.resolve(entry.ctxServer);
      const requestId = entry.disaggRequestId ?? entry.ctx?.requestId ?? entry.ctx?.ctxRequestId ?? null;
      if (requestId === null) {
        read.issue('missing-field', 'no request id (disagg_request_id or ctx_perf_metrics.request_id)', []);
        return first();
      }
      // counted in the worker's blocks, as the entry counts them: the state turns them into tokens
      const kv = entry.ctx?.kvCache ?? null;
      const blocks = { prompt: kv?.numTotalAllocatedBlocks ?? null, cached: kv?.numReusedBlocks ?? null };
      return {
        observations: pair(ctx.now, String(requestId), null, server, null, null, null, true, null, null, blocks),
        issue: null,
      };
    }
    case 'openai': {
      const usage = read.obj(o, 'usage', []);
      const requestId = read.id(o, 'id', []) ?? read.id(o, 'request_id', []);
      if (usage === null || requestId === null) {
        if (issues.length === 0) read.issue('missing-field', 'an OpenAI response line needs id and usage', []);
        return first();
      }
      const details = read.obj(usage, 'prompt_tokens_details', ['usage']);
      const server = read.str(o, 'ctx_server', []) ?? read.str(o, 'server', []) ?? 'unknown';
      const created = o['created'];
      const ts = typeof created === 'bigint' ? toEpochMs(Number(created)) : ctx.now;
      return {
        observations: pair(
          ts,
          String(requestId),
          read.str(o, 'correlation_id', []),
          ctx.resolve(server),
          read.uint(usage, 'prompt_tokens', ['usage']),
          details === null ? null : read.uint(details, 'cached_tokens', ['usage', 'prompt_tokens_details']),
          null,
          true,
          null,
          workerIdsOf(o),
        ),
        issue: null,
      };
    }
  }
}
