// Child task: closed-loop load against a completions endpoint. `concurrency` clients each send requests back to
// back (a 200 KB prompt of token ids, SSE response read to the last byte) for a warm-up period, then for the
// measured period; latency is time to the last byte, throughput = completed requests / measured period.
import { Pool } from 'undici';

export interface LoadParams {
  readonly origin: string;
  readonly path: string;
  readonly concurrency: number;
  readonly warmupSeconds: number;
  readonly measureSeconds: number;
  readonly promptBytes: number;
}

export interface LoadResult {
  readonly requests: number;
  readonly errors: number;
  readonly seconds: number;
  readonly latenciesMs: { p50: number; p90: number; p99: number; max: number };
  readonly responseBytes: number;
  /** requests completed over the whole run (warm-up included), for CPU per request */
  readonly totalRequests: number;
  /** CPU time of this load process over the whole run */
  readonly cpuMs: number;
}

export function promptBody(bytes: number, client: number): string {
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

export function percentile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

export async function runLoad(params: LoadParams): Promise<LoadResult> {
  const pool = new Pool(params.origin, { connections: params.concurrency, pipelining: 1, keepAliveTimeout: 60_000 });
  const bodies = Array.from({ length: params.concurrency }, (_, c) => promptBody(params.promptBytes, c));
  let errors = 0;
  let responseBytes = 0;
  const send = async (client: number): Promise<void> => {
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
  };
  // one continuous closed loop: requests started inside the measured window give latencies, requests completed
  // inside it give throughput; each client keeps exactly one request in flight
  const latencies: number[] = [];
  let completedInWindow = 0;
  let completed = 0;
  const cpuStart = process.cpuUsage();
  const measureStart = performance.now() + params.warmupSeconds * 1000;
  const measureEnd = measureStart + params.measureSeconds * 1000;
  await Promise.all(
    Array.from({ length: params.concurrency }, async (_, client) => {
      for (;;) {
        const start = performance.now();
        if (start >= measureEnd) return;
        await send(client);
        const end = performance.now();
        completed++;
        if (start >= measureStart) latencies.push(end - start);
        if (end >= measureStart && end <= measureEnd) completedInWindow++;
      }
    }),
  );
  await pool.close();
  const cpu = process.cpuUsage(cpuStart);
  if (latencies.length === 0)
    throw new Error(`no request started and completed in the ${params.measureSeconds} s window`);
  latencies.sort((a, b) => a - b);
  return {
    requests: completedInWindow,
    errors,
    seconds: params.measureSeconds,
    latenciesMs: {
      p50: percentile(latencies, 0.5),
      p90: percentile(latencies, 0.9),
      p99: percentile(latencies, 0.99),
      max: latencies[latencies.length - 1]!,
    },
    responseBytes,
    totalRequests: completed,
    cpuMs: (cpu.user + cpu.system) / 1000,
  };
}
