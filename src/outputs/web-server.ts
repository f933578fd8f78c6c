// The sidecar's own HTTP endpoint: /metrics, /-/healthy, /-/ready, POST /-/reload, the landing page, the /ws
// live feed and its observation stream (/ws?view=observations) (docs/design.md §6). Liveness never depends on the router; readiness means sources are started.
import { timingSafeEqual } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../core/observe/ports.js';
import type { Exporter } from './exporter.js';
import { renderLandingPage, type LandingInfo } from './landing-page.js';
import { selfUrl } from './landing-self.js';
import type { LiveFeed } from './live-feed.js';
import type { ObservationStream } from './observation-stream.js';

export interface WebServerDeps {
  readonly exporter: Exporter;
  readonly feed: LiveFeed;
  /** /ws?view=observations: the observation stream a one-shot audit attaches to */
  readonly observations?: ObservationStream;
  readonly landing: () => LandingInfo;
  /** the page at `/` (the live report); without it, the landing page */
  readonly page?: () => string;
  readonly ready: () => boolean;
  /** re-reads the configuration; rejects with the reason when the new one is invalid (the old one stays) */
  readonly reload: () => Promise<void>;
  /** when it returns a token, /ws and POST /-/reload need `Authorization: Bearer <token>` */
  readonly bearerToken?: () => string | null;
  readonly logger: Logger;
}

export class WebServer {
  readonly #server: Server;
  readonly #deps: WebServerDeps;
  /** the Host header of the last page request: how people reach this sidecar (for its own tail command) */
  #pageHost: string | null = null;

  constructor(deps: WebServerDeps) {
    this.#deps = deps;
    this.#server = createServer((req, res) => {
      this.#handle(req, res).catch((err: unknown) => {
        deps.logger.error('web handler failed', { error: String(err) });
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
        res.end('internal error\n');
      });
    });
    this.#server.on('upgrade', (req, socket, head) => {
      if ((req.url ?? '').split('?')[0] !== '/ws') return void socket.destroy();
      if (!this.#authorized(req)) {
        socket.end(
          'HTTP/1.1 401 Unauthorized\r\nwww-authenticate: Bearer\r\ncontent-length: 0\r\nconnection: close\r\n\r\n',
        );
        return;
      }
      const view = new URLSearchParams((req.url ?? '').split('?')[1] ?? '').get('view');
      if (view === 'observations' && deps.observations !== undefined)
        deps.observations.handleUpgrade(req, socket, head);
      else deps.feed.handleUpgrade(req, socket, head);
    });
  }

  async listen(host: string, port: number): Promise<{ host: string; port: number }> {
    this.#server.listen(port, host);
    await once(this.#server, 'listening');
    return this.address();
  }

  /** http://HOST:PORT as the last page request reached this server, else its bound address */
  selfUrl(): string {
    return selfUrl(this.address(), this.#pageHost);
  }

  address(): { host: string; port: number } {
    const a = this.#server.address() as AddressInfo;
    return { host: a.address, port: a.port };
  }

  #authorized(req: IncomingMessage): boolean {
    const token = this.#deps.bearerToken?.() ?? null;
    if (token === null) return true;
    const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    if (m === null) return false;
    const given = Buffer.from(m[1] as string);
    const want = Buffer.from(token);
    return given.length === want.length && timingSafeEqual(given, want);
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    this.#server.closeAllConnections();
    await closed;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const text = (status: number, body: string, type = 'text/plain; charset=utf-8'): void => {
      res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) }).end(body);
    };
    req.resume(); // no endpoint reads a body: discard it without buffering
    if (path === '/-/reload') {
      if (req.method !== 'POST' && req.method !== 'PUT') {
        res.setHeader('allow', 'POST, PUT');
        return text(405, 'Only POST or PUT requests allowed\n');
      }
      if (!this.#authorized(req)) {
        res.setHeader('www-authenticate', 'Bearer');
        return text(401, 'unauthorized\n');
      }
      try {
        await this.#deps.reload();
        return text(200, 'config reloaded\n');
      } catch (err) {
        return text(500, `failed to reload config: ${err instanceof Error ? err.message : String(err)}\n`);
      }
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') return text(405, 'method not allowed\n');
    switch (path) {
      case '/metrics':
        return text(200, await this.#deps.exporter.metrics(), this.#deps.exporter.contentType);
      // /health: the name container platforms probe by default (the image's HEALTHCHECK, the manifests' probes)
      case '/health':
      case '/-/healthy':
        return text(200, 'Healthy\n');
      case '/-/ready':
        return this.#deps.ready() ? text(200, 'Ready\n') : text(503, 'Not ready\n');
      case '/':
        this.#pageHost = typeof req.headers.host === 'string' ? req.headers.host : null;
        return text(200, this.#deps.page?.() ?? renderLandingPage(this.#deps.landing()), 'text/html; charset=utf-8');
      default:
        return text(404, 'not found\n');
    }
  }
}
