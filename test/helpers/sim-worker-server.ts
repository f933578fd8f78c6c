// The simulator's CTX worker model (real KV cache, attention-DP ranks, exact v1 hashes, destructive per-rank event
// queue) on a real port with TensorRT-LLM's wire formats: a test stand-in until the live simulator lands.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { splitJsonArray } from '../../src/core/relay/split-json-array.js';
import { serializeKvEvents } from '../../src/core/wire/serialize-kv-events.js';
import { CtxWorker, type CtxWorkerConfig } from '../../src/sim/ctx-worker.js';
import { StaticPrompt } from '../../src/sim/prompt.js';
import type { Scheduler } from '../../src/sim/scheduler.js';

/** Real time for the model: now() in ms, tasks on timers. */
export class LiveScheduler implements Scheduler {
  readonly #start = performance.now();
  readonly #timers = new Set<NodeJS.Timeout>();

  now(): number {
    return performance.now() - this.#start;
  }

  at(timeMs: number, task: () => void): void {
    const t = setTimeout(
      () => {
        this.#timers.delete(t);
        task();
      },
      Math.max(0, timeMs - this.now()),
    );
    this.#timers.add(t);
  }

  close(): void {
    for (const t of this.#timers) clearTimeout(t);
  }
}

export interface SimWorkerServer {
  readonly url: string;
  readonly worker: CtxWorker;
  /** every event item the worker ever served, as its exact JSON text */
  readonly emitted: string[];
  close(): Promise<void>;
}

export async function startSimWorkerServer(
  id: string,
  overrides: Partial<CtxWorkerConfig> = {},
): Promise<SimWorkerServer> {
  const scheduler = new LiveScheduler();
  const worker = new CtxWorker(scheduler, {
    id,
    ranks: 2,
    blockSize: 16,
    gpuBlocksPerRank: 64,
    hostBlocksPerRank: 0,
    maxConcurrency: 4,
    prefillTokensPerSecond: 1_000_000,
    overheadMs: 1,
    rankAssignment: 'affinity',
    hashAlgo: 'v1_block_key',
    eventBufferMaxSize: 10_000,
    kvEventsPush: false,
    adpGatherDrop: false,
    gatherPeriodMs: 1,
    windowSize: 4096,
    restartDowntimeMs: 100,
    ...overrides,
  });
  const emitted: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0];
      if (path === '/kv_cache_events' && req.method === 'POST') {
        const text = serializeKvEvents(worker.drainEvents());
        const split = splitJsonArray(text);
        if (split.ok) emitted.push(...split.items);
        res.writeHead(200, { 'content-type': 'application/json' }).end(text);
        return;
      }
      if (path === '/server_info') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(worker.serverInfo()));
        return;
      }
      if (path === '/v1/completions' && req.method === 'POST') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          prompt: number[];
          disaggregated_params?: { disagg_request_id?: number };
        };
        worker.submit(
          {
            requestId: String(body.disaggregated_params?.disagg_request_id ?? 0),
            correlationId: null,
            prompt: new StaticPrompt(Uint32Array.from(body.prompt)),
          },
          (r) => {
            const usage = {
              prompt_tokens: r.promptTokens,
              completion_tokens: 1,
              total_tokens: r.promptTokens + 1,
              prompt_tokens_details: { cached_tokens: r.cachedTokens },
            };
            res
              .writeHead(r.ok ? 200 : 503, { 'content-type': 'application/json' })
              .end(JSON.stringify({ id: 'c', choices: [{ index: 0, text: '' }], usage }));
          },
        );
        return;
      }
      res.writeHead(404).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    worker,
    emitted,
    close: async () => {
      scheduler.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
