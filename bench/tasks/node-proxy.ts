// Service task: the bare Node proxy of the relay benchmark — `http.createServer` and an undici Pool streaming the
// request body to one upstream and the response back (`Pool.stream`), hop-by-hop headers dropped, nothing else: no
// recording, no analysis, no state. It is the floor of any proxy written on Node's HTTP stack, measured beside nginx
// and the relay so the report can tell Node's own cost from the relay's. Prints {"ports": [port]} when listening.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';

export interface NodeProxyParams {
  /** e.g. http://127.0.0.1:8001 */
  readonly upstream: string;
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'host']);

function endToEnd(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const name in headers) {
    const value = headers[name];
    if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
  }
  return out;
}

export async function runNodeProxy(params: NodeProxyParams): Promise<never> {
  const pool = new Pool(params.upstream);
  const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    const body = req.method === 'GET' || req.method === 'HEAD' ? null : req;
    pool.stream(
      {
        method: req.method ?? 'GET',
        path: req.url ?? '/',
        headers: endToEnd(req.headers),
        body,
      },
      ({ statusCode, headers }) => {
        res.writeHead(statusCode, endToEnd(headers));
        return res;
      },
      (err) => {
        if (err === null) return;
        if (!res.headersSent) res.writeHead(502).end();
        else res.destroy();
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.stdout.write(`${JSON.stringify({ ports: [(server.address() as AddressInfo).port] })}\n`);
  return new Promise<never>(() => {
    const stop = (): void => {
      server.closeAllConnections();
      process.exit(0);
    };
    process.on('SIGTERM', stop);
    process.stdin.on('end', stop);
    process.stdin.resume();
  });
}
