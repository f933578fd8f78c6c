// GET /perf_metrics of the disaggregated orchestrator (docs/trtllm-wire.md §5): each CTX server's /perf_metrics
// entries joined with the requests the orchestrator served, by ctx_request_id. Requests whose entry has not come yet
// wait for the next call; at most PERF_KEYS_MAX of them are kept (the oldest go first).
import { parsePerfMetrics } from '../../core/wire/parse-perf-metrics.js';
import type { JsonValue } from '../../core/wire/lossless-json.js';
import { jsonText } from './json-text.js';

/** a served request waiting for its CTX worker's /perf_metrics entry (the disaggregated join, docs/trtllm-wire.md §5) */
export interface PerfKey {
  readonly ctxServer: string;
  readonly ctxRequestId: string;
  readonly disaggRequestId: number;
  readonly arrivalS: number;
  readonly firstTokenS: number;
}

const PERF_KEYS_MAX = 10_000;

export class PerfMetricsJoin {
  #keys: PerfKey[] = [];

  /** how many served requests wait for their CTX entry */
  get pending(): number {
    return this.#keys.length;
  }

  add(key: PerfKey): void {
    this.#keys.push(key);
    if (this.#keys.length > PERF_KEYS_MAX) this.#keys.splice(0, this.#keys.length - PERF_KEYS_MAX);
  }

  /** `fetchText(server)`: that server's /perf_metrics body, null when it did not answer 200; throws when unreachable */
  async drain(fetchText: (server: string) => Promise<string | null>): Promise<string> {
    const servers = [...new Set(this.#keys.map((k) => k.ctxServer))];
    const byServer = new Map<string, Map<string, JsonValue>>();
    await Promise.all(
      servers.map(async (server) => {
        const entries = new Map<string, JsonValue>();
        byServer.set(server, entries);
        try {
          const text = await fetchText(server);
          if (text === null) return;
          for (const entry of parsePerfMetrics(text).value) {
            if (entry.kind === 'worker' && entry.requestId !== null) entries.set(String(entry.requestId), entry.raw);
          }
        } catch {
          // an unreachable server's requests stay pending for the next call
        }
      }),
    );
    const out: string[] = [];
    const pending: PerfKey[] = [];
    for (const key of this.#keys) {
      const ctx = byServer.get(key.ctxServer)?.get(key.ctxRequestId);
      if (ctx === undefined) {
        pending.push(key);
        continue;
      }
      out.push(
        `{"ctx_server":${JSON.stringify(key.ctxServer)},"gen_server":null,"disagg_request_id":${key.disaggRequestId},` +
          `"disagg_server_arrival_time":${key.arrivalS},"disagg_server_first_token_time":${key.firstTokenS},` +
          `"ctx_perf_metrics":${jsonText(ctx)},"gen_perf_metrics":null}`,
      );
    }
    this.#keys = pending;
    return `[${out.join(',')}]`;
  }
}
