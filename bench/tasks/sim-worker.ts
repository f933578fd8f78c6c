// Service task: N simulated TensorRT-LLM CTX workers (docs/trtllm-wire.md §2, §4) on ephemeral loopback ports, for
// the relay and scrape benchmarks. Completions stream SSE chunks with usage; `POST /kv_cache_events` is
// destructive and hands out a preloaded event payload once. Prints {"ports": [...]} when listening.
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SimWorkerParams {
  readonly servers: number;
  /** SSE data chunks per completion before the usage chunk and [DONE] */
  readonly chunks: number;
  /** per-server event payload files (JSON arrays) handed out by the first /kv_cache_events poll; may be shorter than servers */
  readonly eventFiles: readonly string[];
}

function drain(req: IncomingMessage): Promise<number> {
  return new Promise((resolve, reject) => {
    let bytes = 0;
    req.on('data', (b: Buffer) => {
      bytes += b.length;
    });
    req.on('end', () => resolve(bytes));
    req.on('error', reject);
  });
}

function handler(index: number, params: SimWorkerParams): (req: IncomingMessage, res: ServerResponse) => void {
  let pendingEvents: string | null =
    params.eventFiles[index] === undefined ? null : readFileSync(params.eventFiles[index], 'utf8');
  let requestCounter = 0;
  return (req, res) => {
    const url = req.url ?? '/';
    void drain(req).then((bytes) => {
      if (req.method === 'POST' && (url.startsWith('/v1/completions') || url.startsWith('/v1/chat/completions'))) {
        const id = `cmpl-${index}-${requestCounter++}`;
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        for (let i = 0; i < params.chunks; i++) {
          res.write(
            `data: {"id":"${id}","object":"text_completion","created":0,"model":"sim","choices":[{"index":0,"text":" tok${i}","logprobs":null,"finish_reason":null}]}\n\n`,
          );
        }
        const promptTokens = Math.max(1, Math.round(bytes / 7));
        res.write(
          `data: {"id":"${id}","object":"text_completion","created":0,"model":"sim","choices":[{"index":0,"text":"","logprobs":null,"finish_reason":"length"}],` +
            `"usage":{"prompt_tokens":${promptTokens},"completion_tokens":${params.chunks},"total_tokens":${promptTokens + params.chunks},"prompt_tokens_details":{"cached_tokens":${Math.floor(promptTokens / 2)}}}}\n\n`,
        );
        res.end('data: [DONE]\n\n');
        return;
      }
      if (req.method === 'POST' && url.startsWith('/kv_cache_events')) {
        const body = pendingEvents ?? '[]';
        pendingEvents = null;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(body);
        return;
      }
      if (url.startsWith('/server_info')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"disaggregated_params":{},"kv_cache_hash_algo":"v1_block_key","tokens_per_block":128}');
        return;
      }
      if (url.startsWith('/health')) {
        res.writeHead(200);
        res.end();
        return;
      }
      if (url.startsWith('/metrics') || url.startsWith('/perf_metrics')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('[]');
        return;
      }
      res.writeHead(404);
      res.end();
    });
  };
}

export async function runSimWorker(params: SimWorkerParams): Promise<never> {
  const servers: Server[] = [];
  const ports: number[] = [];
  for (let i = 0; i < params.servers; i++) {
    const server = createServer({ keepAliveTimeout: 60_000 }, handler(i, params));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push(server);
    ports.push((server.address() as AddressInfo).port);
  }
  process.stdout.write(`${JSON.stringify({ ports })}\n`);
  // run until the parent stops us (SIGTERM) or goes away (stdin closes)
  return new Promise<never>(() => {
    const stop = (): void => {
      for (const s of servers) s.closeAllConnections();
      process.exit(0);
    };
    process.on('SIGTERM', stop);
    process.stdin.on('end', stop);
    process.stdin.resume();
  });
}
