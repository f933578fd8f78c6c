// Child task: open-loop load at a fixed rate, well under saturation: request i is due at start + i / rate whatever
// the earlier ones are doing (no coordinated omission), with a 200 KB prompt of token ids and the SSE response read
// to the last byte. Latency is from the request's due time to its last byte.
import { Pool } from 'undici';
import { percentile, promptBody } from './load.js';

export interface OpenLoadParams {
  readonly origin: string;
  readonly path: string;
  /** requests per second */
  readonly rate: number;
  readonly warmupSeconds: number;
  readonly measureSeconds: number;
  readonly promptBytes: number;
  /** distinct prompts (and at most this many connections) */
  readonly clients: number;
}

export interface OpenLoadResult {
  readonly requests: number;
  readonly errors: number;
  readonly latenciesMs: { p50: number; p90: number; p99: number; max: number };
  /** requests sent over the whole run (warm-up included), for CPU per request */
  readonly totalRequests: number;
  /** how late the generator sent requests, p99 (its own scheduling delay, in every latency) */
  readonly sendLagP99Ms: number;
}

export async function runOpenLoad(params: OpenLoadParams): Promise<OpenLoadResult> {
  const pool = new Pool(params.origin, { connections: params.clients, pipelining: 1, keepAliveTimeout: 60_000 });
  const bodies = Array.from({ length: params.clients }, (_, c) => promptBody(params.promptBytes, c));
  const total = Math.round((params.warmupSeconds + params.measureSeconds) * params.rate);
  const measuredFrom = Math.round(params.warmupSeconds * params.rate);
  const latencies: number[] = [];
  const lags: number[] = [];
  let errors = 0;
  const inflight = new Set<Promise<void>>();
  const start = performance.now() + 50;
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / params.rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const sent = performance.now();
    const one = (async () => {
      try {
        const res = await pool.request({
          method: 'POST',
          path: params.path,
          headers: { 'content-type': 'application/json', 'x-correlation-id': `open-${i % params.clients}` },
          body: bodies[i % params.clients]!,
        });
        for await (const chunk of res.body) void chunk;
        if (res.statusCode !== 200 && i >= measuredFrom) errors++;
      } catch {
        if (i >= measuredFrom) errors++;
      }
      if (i >= measuredFrom) {
        latencies.push(performance.now() - due);
        lags.push(sent - due);
      }
    })();
    inflight.add(one);
    void one.finally(() => inflight.delete(one));
  }
  await Promise.all(inflight);
  await pool.close();
  latencies.sort((a, b) => a - b);
  lags.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    errors,
    latenciesMs: {
      p50: percentile(latencies, 0.5),
      p90: percentile(latencies, 0.9),
      p99: percentile(latencies, 0.99),
      max: latencies[latencies.length - 1]!,
    },
    totalRequests: total,
    sendLagP99Ms: percentile(lags, 0.99),
  };
}
