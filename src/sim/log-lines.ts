// Lines the simulated cluster writes: the canonical request log (docs/design.md §9, one JSON object per line) and
// an orchestrator log in TensorRT-LLM's logger format. By default the newest logger's (tensorrt_llm/logger.py):
// "[MM/DD/YYYY-HH:MM:SS] [TRT-LLM] [I] [serve   ] " then the call's arguments joined by spaces, so a %-style call
// site prints its format string followed by its values; 'formatted' is the older "[TRT-LLM] [I] message" with the
// values in place (and the class-name lines some builds add).
import { percentFormat } from '../core/watch/trtllm-log-line.js';
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

/** how the orchestrator's logger prints a call: the newest logger's form, or the values %-formatted in place */
export type OrchestratorLogFormat = 'trtllm' | 'formatted';

export const ORCHESTRATOR_LOG_FORMATS: readonly OrchestratorLogFormat[] = ['trtllm', 'formatted'];

/** One logger call of router.py: an f-string's text, or a %-style format string with its values. */
export interface LogCall {
  readonly level: LogLevel;
  readonly message: string;
  readonly args?: readonly (string | number)[];
}

/** the module tag router.py's lines carry (tensorrt_llm.serve → "serve" padded to 8) */
const SERVE_MODULE = '[serve   ]';

export function orchestratorLine(
  virtualMs: number,
  level: LogLevel,
  message: string,
  args: readonly (string | number)[] = [],
  format: OrchestratorLogFormat = 'trtllm',
): string {
  const stamp = `[${trtllmStamp(virtualMs)}]`;
  if (format === 'formatted') return `${stamp} [TRT-LLM] [${level}] ${percentFormat(message, args)}`;
  return [stamp, '[TRT-LLM]', `[${level}]`, SERVE_MODULE, message, ...args.map(String)].join(' ');
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

/**
 * the router's configuration lines, logged once at start. The real router.py logs only BlockHashMixin's line (the
 * KV-cache-aware and conversation routers); 'formatted' adds the class-name lines some builds write.
 */
export function routerConfigLines(
  settings: RouterSettings,
  servers: readonly string[],
  configuredTokensPerBlock: number | null = settings.tokensPerBlock,
  format: OrchestratorLogFormat = 'trtllm',
): string[] {
  if (format === 'trtllm') return blockHashMixinLines(settings, configuredTokensPerBlock);
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

/** router_utils' f-string at construction (BlockHashMixin._init_block_hashing) */
function blockHashMixinLines(settings: RouterSettings, configuredTokensPerBlock: number | null): string[] {
  if (settings.type === 'conversation')
    return [
      `BlockHashMixin: tokens_per_block=${settings.tokensPerBlock}, custom_tokenizer=None, model_path=None, use_harmony=None`,
    ];
  if (settings.type !== 'kv_cache_aware') return [];
  if (settings.profile === 'newest')
    return [
      `BlockHashMixin: tokens_per_block=${configuredTokensPerBlock ?? 32}${configuredTokensPerBlock === null ? ' (auto, adopts worker)' : ''}, custom_tokenizer=None, model_path=None, use_harmony=None`,
    ];
  return [`BlockHashMixin: tokens_per_block=${settings.tokensPerBlock}, custom_tokenizer=None`];
}

/** Router._prepare_server's line: the stock one names no server; 'formatted' builds name it first */
export function serverReadyLine(server: string, info: ServerInfo, format: OrchestratorLogFormat = 'trtllm'): string {
  return `${format === 'trtllm' ? '' : `${server} `}server is ready with info: ${pyRepr(info)}`;
}

export function pollFailureLine(server: string, message: string): string {
  return `Failed to poll KV cache events from ${server}: ${message}`;
}
