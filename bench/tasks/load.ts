// Child task: closed-loop load against a completions endpoint. `concurrency` clients each send requests back to
// back (a 200 KB prompt of token ids, SSE response read to the last byte); latency is time to the last byte.
import { Pool } from 'undici';

export interface LoadParams {
  readonly origin: string;
  readonly path: string;
  readonly concurrency: number;
  /** requests per client after warm-up */
  readonly requestsPerClient: number;
  readonly warmupPerClient: number;
  readonly promptBytes: number;
}

export interface LoadResult {
  readonly requests: number;
  readonly errors: number;
  readonly seconds: number;
  readonly latenciesMs: { p50: number; p90: number; p99: number; max: number };
  readonly responseBytes: number;
}

function promptBody(bytes: number, client: number): string {
  const ids: number[] = [];
  let x = 12345 + client;
  let len = 60;
  while (len < bytes - 40) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    const id = x % 152_064;
    ids.push(id);
    len += String(id).length + 1;
  }
  return JSON.stringify({ model: 'sim', prompt: ids, max_tokens: 16, stream: true });
}

function percentile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

export async function runLoad(params: LoadParams): Promise<LoadResult> {
  const pool = new Pool(params.origin, { connections: params.concurrency, pipelining: 1, keepAliveTimeout: 60_000 });
  const bodies = Array.from({ length: params.concurrency }, (_, c) => promptBody(params.promptBytes, c));
  let errors = 0;
  let responseBytes = 0;
  const latencies: number[] = [];
  const one = async (client: number, record: boolean): Promise<void> => {
    const start = performance.now();
    try {
      const res = await pool.request({
        method: 'POST',
        path: params.path,
        headers: { 'content-type': 'application/json', 'x-correlation-id': `bench-${client}` },
        body: bodies[client]!,
      });
      for await (const chunk of res.body) responseBytes += (chunk as Buffer).length;
      if (res.statusCode !== 200) errors++;
    } catch {
      errors++;
    }
    if (record) latencies.push(performance.now() - start);
  };
  const clients = (count: number, record: boolean): Promise<void[]> =>
    Promise.all(
      Array.from({ length: params.concurrency }, async (_, c) => {
        for (let i = 0; i < count; i++) await one(c, record);
      }),
    );
  await clients(params.warmupPerClient, false);
  responseBytes = 0;
  const start = performance.now();
  await clients(params.requestsPerClient, true);
  const seconds = (performance.now() - start) / 1000;
  await pool.close();
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    errors,
    seconds,
    latenciesMs: { p50: percentile(latencies, 0.5), p90: percentile(latencies, 0.9), p99: percentile(latencies, 0.99), max: latencies[latencies.length - 1]! },
    responseBytes,
  };
}
