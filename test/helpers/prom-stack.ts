// A real Prometheus and Alertmanager (Debian packages) on free loopback ports with their own temp dirs, plus a
// webhook receiver: the alert path operators run, started per test. Prometheus scrapes its targets as
// job="kvsentinel" every second and evaluates a copy of alerts/kvsentinel.rules.yaml whose `for:` durations are
// shortened (the real timing is covered by promtool test rules).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { stringify } from 'yaml';
import { RULES_FILE } from './prom-tools.js';
import { freePort } from './test-resources.js';

export interface WebhookAlert {
  readonly status: 'firing' | 'resolved';
  readonly labels: Record<string, string>;
  readonly annotations: Record<string, string>;
  readonly startsAt: string;
  readonly endsAt: string;
  readonly generatorURL: string;
  readonly fingerprint: string;
}
/** Alertmanager webhook payload, version 4. */
export interface WebhookMessage {
  readonly version: string;
  readonly status: 'firing' | 'resolved';
  readonly receiver: string;
  readonly groupLabels: Record<string, string>;
  readonly commonLabels: Record<string, string>;
  readonly alerts: readonly WebhookAlert[];
}

export interface WebhookReceiver {
  readonly url: string;
  readonly messages: WebhookMessage[];
  /** Every alert delivered so far, flattened across notifications. */
  alerts(): WebhookAlert[];
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const messages: WebhookMessage[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/alerts') {
        try {
          messages.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as WebhookMessage);
          res.writeHead(200).end();
        } catch {
          res.writeHead(400).end();
        }
      } else {
        res.writeHead(404).end();
      }
    });
  });
  const port = await listen(server);
  return {
    url: `http://127.0.0.1:${port}/alerts`,
    messages,
    alerts: () => messages.flatMap((m) => m.alerts),
    close: () => closeServer(server),
  };
}

export function listen(server: Server, host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve((server.address() as AddressInfo).port));
  });
}

export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}

/** alerts/kvsentinel.rules.yaml with every `for:` set to `forDuration`; windows and expressions unchanged. */
export function fastRulesText(forDuration = '1s'): string {
  const text = readFileSync(RULES_FILE, 'utf8');
  const out = text.replace(/^(\s+for:) \S+$/gm, `$1 ${forDuration}`);
  if (out === text) throw new Error(`${RULES_FILE}: no for: lines to shorten`);
  return out;
}

class Daemon {
  readonly name: string;
  private readonly child: ChildProcess;
  private log = '';
  private readonly exited: Promise<void>;
  constructor(name: string, bin: string, args: readonly string[]) {
    this.name = name;
    this.child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const keep = (c: Buffer): void => {
      this.log = (this.log + c.toString('utf8')).slice(-20_000);
    };
    this.child.stdout?.on('data', keep);
    this.child.stderr?.on('data', keep);
    this.exited = new Promise((resolve) => this.child.once('close', () => resolve()));
    this.child.once('error', (err) => {
      this.log += `\n${bin} failed to start (${err.message}): install the Debian packages prometheus and prometheus-alertmanager (.ci/run does)`;
    });
  }
  get output(): string {
    return this.log;
  }
  get running(): boolean {
    return this.child.pid !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }
  async stop(): Promise<void> {
    if (!this.running) return;
    this.child.kill('SIGTERM');
    const stopped = await Promise.race([this.exited.then(() => true), sleep(5000).then(() => false)]);
    if (!stopped) {
      this.child.kill('SIGKILL');
      await this.exited;
    }
  }
}

async function waitReady(d: Daemon, url: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!d.running) throw new Error(`${d.name} exited during startup:\n${d.output}`);
    try {
      const r = await fetch(url);
      if (r.ok) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`${d.name} not ready at ${url} after ${timeoutMs} ms:\n${d.output}`);
}

export interface PromStack {
  readonly prometheusUrl: string;
  readonly alertmanagerUrl: string;
  readonly webhook: WebhookReceiver;
  /** Instant query, now or at `time` (Unix seconds); returns the result vector (throws on a query error). */
  query(expr: string, time?: number): Promise<{ metric: Record<string, string>; value: [number, string] }[]>;
  /** Values of a label across series matching a selector (Grafana's label_values()). */
  labelValues(label: string, match: string): Promise<string[]>;
  /** Polls until `check` returns a value other than undefined; the message and daemon logs explain a timeout. */
  waitFor<T>(what: string, check: () => Promise<T | undefined> | T | undefined, timeoutMs?: number): Promise<T>;
  logs(): string;
  stop(): Promise<void>;
}

export interface PromStackOptions {
  /** host:port of the /metrics endpoint scraped as job="kvsentinel"; several for sidecars sharding a fleet. */
  readonly target: string | readonly string[];
  readonly forDuration?: string;
  /**
   * Alertmanager's configuration, with `webhookUrl` for the receivers' URLs; by default one receiver, `hook`, grouped
   * by alertname and instance, flushing at once.
   */
  readonly alertmanagerConfig?: (webhookUrl: string) => Record<string, unknown>;
}

export async function startPromStack(opts: PromStackOptions): Promise<PromStack> {
  const dir = mkdtempSync(join(tmpdir(), 'kvs-promstack-'));
  const webhook = await startWebhookReceiver();
  const daemons: Daemon[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(daemons.map((d) => d.stop()));
    await webhook.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const [promPort, amPort] = [await freePort(), await freePort()];
    writeFileSync(join(dir, 'kvsentinel.rules.yaml'), fastRulesText(opts.forDuration));
    writeFileSync(
      join(dir, 'alertmanager.yml'),
      stringify(
        opts.alertmanagerConfig?.(webhook.url) ?? {
          route: {
            receiver: 'hook',
            group_by: ['alertname', 'instance'],
            group_wait: '0s',
            group_interval: '1s',
            repeat_interval: '1h',
          },
          receivers: [{ name: 'hook', webhook_configs: [{ url: webhook.url, send_resolved: true }] }],
        },
      ),
    );
    writeFileSync(
      join(dir, 'prometheus.yml'),
      stringify({
        global: { scrape_interval: '1s', scrape_timeout: '900ms', evaluation_interval: '1s' },
        rule_files: [join(dir, 'kvsentinel.rules.yaml')],
        alerting: { alertmanagers: [{ static_configs: [{ targets: [`127.0.0.1:${amPort}`] }] }] },
        scrape_configs: [
          {
            job_name: 'kvsentinel',
            static_configs: [{ targets: typeof opts.target === 'string' ? [opts.target] : opts.target }],
          },
        ],
      }),
    );
    const am = new Daemon('alertmanager', 'prometheus-alertmanager', [
      `--config.file=${join(dir, 'alertmanager.yml')}`,
      `--storage.path=${join(dir, 'am')}`,
      `--web.listen-address=127.0.0.1:${amPort}`,
      '--cluster.listen-address=',
      '--log.level=warn',
    ]);
    daemons.push(am);
    const prom = new Daemon('prometheus', 'prometheus', [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'tsdb')}`,
      `--web.listen-address=127.0.0.1:${promPort}`,
      '--log.level=warn',
    ]);
    daemons.push(prom);
    const prometheusUrl = `http://127.0.0.1:${promPort}`;
    const alertmanagerUrl = `http://127.0.0.1:${amPort}`;
    await Promise.all([waitReady(am, `${alertmanagerUrl}/-/ready`), waitReady(prom, `${prometheusUrl}/-/ready`)]);

    const logs = (): string =>
      daemons.map((d) => `--- ${d.name}\n${d.output}`).join('\n') +
      `\n--- webhook: ${JSON.stringify(webhook.messages)}`;
    const api = async <T>(path: string): Promise<T> => {
      const r = await fetch(`${prometheusUrl}${path}`);
      const body = (await r.json()) as { status: string; data: T; error?: string };
      if (body.status !== 'success') throw new Error(`Prometheus ${path}: ${body.error ?? r.status}`);
      return body.data;
    };
    return {
      prometheusUrl,
      alertmanagerUrl,
      webhook,
      async query(expr, time) {
        const at = time === undefined ? '' : `&time=${time}`;
        const data = await api<{
          resultType: string;
          result: { metric: Record<string, string>; value: [number, string] }[];
        }>(`/api/v1/query?query=${encodeURIComponent(expr)}${at}`);
        if (data.resultType !== 'vector') throw new Error(`expected a vector from ${expr}, got ${data.resultType}`);
        return data.result;
      },
      labelValues(label, match) {
        return api<string[]>(`/api/v1/label/${encodeURIComponent(label)}/values?match[]=${encodeURIComponent(match)}`);
      },
      async waitFor(what, check, timeoutMs = 30_000) {
        const deadline = Date.now() + timeoutMs;
        for (;;) {
          const v = await check();
          if (v !== undefined) return v;
          if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}\n${logs()}`);
          await sleep(200);
        }
      },
      logs,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
