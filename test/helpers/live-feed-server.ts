// A LiveFeed behind a real HTTP server on a free loopback port, stopped after the test: its /ws URL.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LiveFeed } from '../../src/outputs/live-feed.js';
import type { Cleanup } from './test-resources.js';

export async function serveLiveFeed(feed: LiveFeed, cleanups: Cleanup[]): Promise<string> {
  const server = createServer((_req, res) => res.writeHead(404).end());
  server.on('upgrade', (req, socket, head) => feed.handleUpgrade(req, socket, head));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.push(async () => {
    await feed.stop();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });
  return `ws://127.0.0.1:${(server.address() as AddressInfo).port}/ws`;
}
