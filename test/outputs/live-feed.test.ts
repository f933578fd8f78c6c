// The live feed's client bound, over a real HTTP server on port 0: past maxClients an upgrade gets 503 and is
// counted; a client that leaves frees its place.
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { LiveFeed } from '../../src/outputs/live-feed.js';
import { silentLogger } from '../../src/sources/ports.js';
import { snapshotFixture } from '../helpers/snapshot-fixture.js';
import { eventually } from '../helpers/recording-sink.js';
import { serveLiveFeed } from '../helpers/live-feed-server.js';
import { cleanupsAfterEach } from '../helpers/test-resources.js';

const cleanups = cleanupsAfterEach();

async function connect(url: string): Promise<{ ws: WebSocket; status: number }> {
  const ws = new WebSocket(url);
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ ws, status: 101 }));
    ws.once('unexpected-response', (_req, res) => resolve({ ws, status: res.statusCode ?? 0 }));
    ws.once('error', reject);
  });
}

describe('live feed bounds', () => {
  it('refuses clients past maxClients with 503, counted; a client that leaves frees its place', async () => {
    const feed = new LiveFeed(
      { snapshot: () => snapshotFixture(), clock: () => 1, logger: silentLogger, version: 'test' },
      { maxClients: 2 },
    );
    const url = await serveLiveFeed(feed, cleanups);
    const a = await connect(url);
    const b = await connect(url);
    expect([a.status, b.status]).toEqual([101, 101]);
    expect((await connect(url)).status).toBe(503);
    expect((await connect(url)).status).toBe(503);
    expect(feed.refusedClients).toBe(2);
    a.ws.close();
    await eventually(() => feed.clients === 1, 5_000, 'the server to see the close');
    const c = await connect(url);
    expect(c.status).toBe(101);
    c.ws.close();
    b.ws.close();
  });
});
