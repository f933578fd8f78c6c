// A live CTX worker's metrics endpoints: the draining GET /perf_metrics (per-request timings and kv_cache_metrics,
// bounded by perf_metrics_max_requests) and GET /prometheus/metrics (trtllm_-style counters and gauges).
import type { CtxResult, CtxWorker } from '../ctx-worker.js';

export interface PerfEntry {
  readonly ctxRequestId: number;
  readonly result: CtxResult;
  readonly arrivalS: number;
  readonly scheduledS: number;
  readonly firstTokenS: number;
}

/** The requests /perf_metrics has not returned yet, the newest `max` of them (0: always []). */
export class PerfLog {
  readonly #max: number;
  readonly #entries: PerfEntry[] = [];

  constructor(max: number) {
    this.#max = max;
  }

  record(entry: PerfEntry): void {
    if (this.#max <= 0) return;
    this.#entries.push(entry);
    if (this.#entries.length > this.#max) this.#entries.splice(0, this.#entries.length - this.#max);
  }

  /** the body of GET /perf_metrics; the entries returned are gone */
  drain(blockSize: number): string {
    const entries = this.#entries.splice(0, this.#entries.length);
    return JSON.stringify(
      entries.map((e) => {
        const total = Math.ceil(Math.max(e.result.promptTokens - 1, 0) / blockSize);
        const reused = Math.floor(e.result.cachedTokens / blockSize);
        return {
          request_id: e.ctxRequestId,
          perf_metrics: {
            first_iter: e.ctxRequestId,
            last_iter: e.ctxRequestId,
            timing_metrics: {
              server_arrival_time: e.arrivalS,
              arrival_time: e.arrivalS,
              first_scheduled_time: e.scheduledS,
              first_token_time: e.firstTokenS,
              server_first_token_time: e.firstTokenS,
              last_token_time: e.firstTokenS,
            },
            kv_cache_metrics: {
              num_total_allocated_blocks: total,
              num_new_allocated_blocks: total - reused,
              num_reused_blocks: reused,
              num_missed_blocks: total - reused,
            },
          },
          ctx_request_id: e.ctxRequestId,
        };
      }),
    );
  }
}

/** The body of GET /prometheus/metrics for worker `id`. */
export function prometheusText(w: CtxWorker, id: string): string {
  const labels = `{model_name="kvsentinel-sim",engine_type="trtllm",server="${id}"}`;
  let used = 0;
  for (let r = 0; r < w.config.ranks; r++) used += w.rankCache(r).gpuSize;
  const capacity = w.config.ranks * w.config.gpuBlocksPerRank;
  const lines: string[] = [];
  const metric = (name: string, type: 'counter' | 'gauge', help: string, value: number): void => {
    lines.push(
      `# HELP ${name} ${help}`,
      `# TYPE ${name} ${type}`,
      `${name}${labels} ${Number.isFinite(value) ? value : 0}`,
    );
  };
  metric('trtllm_request_success_total', 'counter', 'Count of successfully processed requests.', w.stats.requests);
  metric('trtllm_prompt_tokens_total', 'counter', 'Prompt tokens processed.', w.stats.promptTokens);
  metric(
    'trtllm_prompt_cached_tokens_total',
    'counter',
    'Prompt tokens served from the KV cache.',
    w.stats.cachedTokens,
  );
  metric(
    'trtllm_kv_cache_hit_rate',
    'gauge',
    'KV cache hit rate (cached / prompt tokens).',
    w.stats.promptTokens === 0 ? 0 : w.stats.cachedTokens / w.stats.promptTokens,
  );
  metric(
    'trtllm_kv_cache_utilization',
    'gauge',
    'Used fraction of the GPU KV cache blocks.',
    capacity === 0 ? 0 : used / capacity,
  );
  metric('trtllm_kv_cache_used_blocks', 'gauge', 'Used GPU KV cache blocks.', used);
  metric('trtllm_kv_cache_free_blocks', 'gauge', 'Free GPU KV cache blocks.', capacity - used);
  metric('trtllm_num_requests_running', 'gauge', 'Requests in prefill.', w.running);
  metric('trtllm_num_requests_waiting', 'gauge', 'Requests queued.', w.inflight - w.running);
  return `${lines.join('\n')}\n`;
}
