// Lines the simulated cluster writes: the canonical request log (docs/design.md §9, one JSON object per line) and
// an orchestrator log in TensorRT-LLM's logger format ("[MM/DD/YYYY-HH:MM:SS] [TRT-LLM] [I] message").
import type { ServerInfo } from './ctx-worker.js';
import type { RouterSettings } from './routers/router.js';

/** virtual time 0 of a run, as wall-clock time in the logs */
export const VIRTUAL_EPOCH_MS = Date.UTC(2026, 5, 3, 0, 0, 0);

export function isoAt(virtualMs: number): string {
  return new Date(VIRTUAL_EPOCH_MS + Math.round(virtualMs)).toISOString();
}

export interface RequestLogEntry {
  readonly ts: number;
  readonly requestId: string;
  readonly correlationId: string | null;
  readonly ctxServer: string;
  readonly promptTokens: number;
  readonly cachedTokens: number;
  readonly promptTokenIds?: Uint32Array;
}

export function requestLogLine(entry: RequestLogEntry): string {
  const head = JSON.stringify({
    ts: isoAt(entry.ts),
    request_id: entry.requestId,
    correlation_id: entry.correlationId,
    ctx_server: entry.ctxServer,
    prompt_tokens: entry.promptTokens,
    cached_tokens: entry.cachedTokens,
  });
  if (entry.promptTokenIds === undefined) return head;
  return `${head.slice(0, -1)},"prompt_token_ids":[${entry.promptTokenIds.join(',')}]}`;
}

function two(n: number): string {
  return n.toString().padStart(2, '0');
}

function trtllmStamp(virtualMs: number): string {
  const d = new Date(VIRTUAL_EPOCH_MS + Math.round(virtualMs));
  return `${two(d.getUTCMonth() + 1)}/${two(d.getUTCDate())}/${d.getUTCFullYear()}-${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}`;
}

export type LogLevel = 'I' | 'W' | 'E' | 'D';

export function orchestratorLine(virtualMs: number, level: LogLevel, message: string): string {
  return `[${trtllmStamp(virtualMs)}] [TRT-LLM] [${level}] ${message}`;
}

function pyBool(value: boolean | null): string {
  return value === null ? 'None' : value ? 'True' : 'False';
}

/** Python repr of a small JSON-like value (what f"{dict}" prints) */
export function pyRepr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'boolean') return pyBool(value);
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (typeof value === 'string') return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(', ')}]`;
  const entries = Object.entries(value as Record<string, unknown>).map(([k, v]) => `${pyRepr(k)}: ${pyRepr(v)}`);
  return `{${entries.join(', ')}}`;
}

/** the router's configuration lines, logged once at start */
export function routerConfigLines(
  settings: RouterSettings,
  servers: readonly string[],
  configuredTokensPerBlock: number | null = settings.tokensPerBlock,
): string[] {
  const lines: string[] = [];
  const name = {
    round_robin: 'RoundRobinRouter',
    load_balancing: 'LoadBalancingRouter',
    kv_cache_aware: 'KvCacheAwareRouter',
    conversation: 'ConversationRouter',
  }[settings.type];
  lines.push(`${name} initialized for context servers: ${pyRepr([...servers])}`);
  if (settings.type === 'kv_cache_aware' && settings.profile === 'newest') {
    // logged at construction, before any worker's size is adopted: `configuredTokensPerBlock` null = unset
    lines.push(
      `BlockHashMixin: tokens_per_block=${configuredTokensPerBlock ?? 32}${configuredTokensPerBlock === null ? ' (auto, adopts worker)' : ''}, custom_tokenizer=None, model_path=None, use_harmony=None`,
    );
    lines.push(
      `KvCacheAwareRouter: max_batch_size=${settings.maxBatchSize}, load_weight=${settings.loadWeight ?? 0.25}, track_routed_blocks=${pyBool(settings.trackRoutedBlocks ?? true)}`,
    );
  } else if (settings.type === 'kv_cache_aware') {
    lines.push(`BlockHashMixin: tokens_per_block=${settings.tokensPerBlock}`);
    lines.push(
      `KvCacheAwareRouter: max_batch_size=${settings.maxBatchSize}, backfill_block_hashes_on_finish=${pyBool(settings.backfillBlockHashesOnFinish)}`,
    );
  }
  return lines;
}

export function serverReadyLine(server: string, info: ServerInfo): string {
  return `${server} server is ready with info: ${pyRepr(info)}`;
}

export function pollFailureLine(server: string, message: string): string {
  return `Failed to poll KV cache events from ${server}: ${message}`;
}
