// `kvsentinel tail URL`: prints the live feed of a running `kvsentinel serve` (its /ws endpoint), one line per frame.
import type { Command } from 'commander';
import { WebSocket } from 'ws';
import { CliError } from '../cli-error.js';
import { formatLiveFrame } from '../reporters/live-frame-text.js';
import { colorFor } from '../reporters/color.js';

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
  else if (u.protocol !== 'ws:' && u.protocol !== 'wss:') throw new CliError(`URL '${text}': expected http(s):// or ws(s)://`);
  if (u.pathname === '/' || u.pathname === '') u.pathname = '/ws';
  return u.toString();
}

export function registerTailCommand(program: Command): void {
  program
    .command('tail')
    .description('print the live feed of a running kvsentinel serve: decisions, outcomes, finding changes, table stats')
    .argument('<url>', 'the sidecar, e.g. http://127.0.0.1:9464')
    .option('--json', 'print each frame as received (one JSON object per line)')
    .action(async (url: string, options: { json?: boolean }) => {
      const target = feedUrl(url);
      const color = colorFor(process.stdout);
      await new Promise<void>((resolve, reject) => {
        const ws = new WebSocket(target, { handshakeTimeout: 10_000 });
        let opened = false;
        ws.on('open', () => (opened = true));
        ws.on('message', (data: Buffer) => {
          const text = data.toString('utf8');
          if (options.json === true) {
            process.stdout.write(`${text}\n`);
            return;
          }
          try {
            process.stdout.write(`${formatLiveFrame(JSON.parse(text) as Record<string, unknown>, color)}\n`);
          } catch {
            process.stdout.write(`${text}\n`);
          }
        });
        ws.on('error', (err) => {
          if (!opened) reject(new CliError(`cannot connect to ${target}: ${err.message}`));
        });
        ws.on('close', () => resolve());
        const stop = (): void => ws.close(1000);
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
    });
}
