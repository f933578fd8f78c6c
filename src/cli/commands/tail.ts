// `kvsentinel tail URL`: the live feed of a running `kvsentinel serve` (its /ws endpoint): one line per frame in
// timestamp order, filtered by --only and --server, or with --summary one screen redrawn every second.
import type { Command } from 'commander';
import { WebSocket } from 'ws';
import { KvsentinelError } from '../../core/errors.js';
import { CliError } from '../cli-error.js';
import { colorFor } from '../reporters/color.js';
import { formatLiveFrame } from '../reporters/live-frame-text.js';
import { filterFrame, parseOnly, TailSummary, TimestampOrder, type Frame } from '../reporters/tail-view.js';

/** how long a frame waits for earlier-stamped ones before it is printed */
const ORDER_HOLD_MS = 300;
const SUMMARY_EVERY_MS = 1_000;

/** http://host:port[/…] or ws://… → the ws:// URL of the feed. */
export function feedUrl(text: string): string {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw new CliError(`URL '${text}' is not a URL (e.g. http://127.0.0.1:9464)`);
  }
  if (u.protocol === 'http:') u.protocol = 'ws:';
  else if (u.protocol === 'https:') u.protocol = 'wss:';
  else if (u.protocol !== 'ws:' && u.protocol !== 'wss:')
    throw new CliError(`URL '${text}': expected http(s):// or ws(s)://`);
  if (u.pathname === '/' || u.pathname === '') u.pathname = '/ws';
  return u.toString();
}

interface TailOptions {
  json?: boolean;
  only?: string;
  server?: string;
  summary?: boolean;
}

export function registerTailCommand(program: Command): void {
  program
    .command('tail')
    .description('print the live feed of a running kvsentinel serve: decisions, outcomes, finding changes, table stats')
    .argument('<url>', 'the sidecar, e.g. http://127.0.0.1:9464')
    .option('--json', 'print each frame as one JSON object per line (still filtered and ordered)')
    .option(
      '--only <kinds>',
      'only these frames: a comma-separated list of findings, stats, decisions, outcomes, sources',
    )
    .option('--server <id>', 'only frames about this CTX server (stats frames keep only its row)')
    .option(
      '--summary',
      'one screen redrawn every second (verdict, hit ratios, per-server table, active findings) instead of one line per frame',
    )
    .action(async (url: string, options: TailOptions) => {
      const target = feedUrl(url);
      const only = options.only !== undefined ? parseOnly(options.only) : null;
      if (typeof only === 'string') throw new CliError(only);
      if (options.summary === true && options.json === true) throw new CliError('give --summary or --json, not both');
      const server = options.server ?? null;
      const color = colorFor(process.stdout);
      const tty = process.stdout.isTTY === true;
      const summary = options.summary === true ? new TailSummary() : null;
      const print = (frame: Frame): void => {
        if (summary !== null) return summary.add(frame);
        if (options.json === true) return void process.stdout.write(`${JSON.stringify(frame)}\n`);
        process.stdout.write(`${formatLiveFrame(frame, color)}\n`);
      };
      const order = new TimestampOrder(ORDER_HOLD_MS, print);
      const flushTimer = setInterval(() => order.flush(Date.now()), 100);
      const summaryTimer =
        summary !== null
          ? setInterval(() => {
              order.flush(Date.now());
              // on a terminal the screen is redrawn in place; elsewhere each screen follows the last
              process.stdout.write(
                `${tty ? '\x1b[H\x1b[2J' : ''}${summary.render(target, color, Date.now())}${tty ? '' : '\n'}`,
              );
            }, SUMMARY_EVERY_MS)
          : null;
      try {
        await new Promise<void>((resolve, reject) => {
          const ws = new WebSocket(target, { handshakeTimeout: 10_000 });
          let opened = false;
          ws.on('open', () => (opened = true));
          ws.on('message', (data: Buffer) => {
            const text = data.toString('utf8');
            let frame: Frame;
            try {
              frame = JSON.parse(text) as Frame;
            } catch {
              process.stderr.write(`kvsentinel tail: skipped a frame that is not JSON: ${text.slice(0, 80)}\n`);
              return;
            }
            const kept = filterFrame(frame, only, server);
            if (kept !== null) order.push(kept, Date.now());
          });
          ws.on('error', (err) => {
            if (!opened)
              reject(new KvsentinelError('source-unreachable', `cannot connect to ${target}: ${err.message}`));
          });
          ws.on('close', () => resolve());
          const stop = (): void => ws.close(1000);
          process.once('SIGINT', stop);
          process.once('SIGTERM', stop);
        });
      } finally {
        clearInterval(flushTimer);
        if (summaryTimer !== null) clearInterval(summaryTimer);
        order.flush(Date.now(), true);
      }
    });
}
