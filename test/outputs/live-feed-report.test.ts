// The live report page's view of /ws, over a real HTTP server on port 0: a client of `/ws?view=report` gets the
// page's content on connect and then on the report interval, and none of the feed's other frames; a `tail` client
// never gets report frames.
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { LiveFeed } from '../../src/outputs/live-feed.js';
import { silentLogger } from '../../src/sources/ports.js';
import { eventually } from '../helpers/recording-sink.js';
import { snapshotFixture } from '../helpers/snapshot-fixture.js';
import { serveLiveFeed } from '../helpers/live-feed-server.js';
import { cleanupsAfterEach } from '../helpers/test-resources.js';

const cleanups = cleanupsAfterEach();

async function client(url: string): Promise<{ ws: WebSocket; frames: { type: string; html?: string }[] }> {
  const ws = new WebSocket(url);
  const frames: { type: string; html?: string }[] = [];
  ws.on('message', (data: Buffer) => frames.push(JSON.parse(data.toString('utf8')) as { type: string }));
  await once(ws, 'open');
  return { ws, frames };
}

describe('live feed: the report view', () => {
  it('report pages get report frames only, feed clients never get them', async () => {
    let now = 10_000;
    let renders = 0;
    const feed = new LiveFeed(
      {
        snapshot: () => snapshotFixture({ now }),
        clock: () => now,
        logger: silentLogger,
        version: 'test',
        report: () => `<p>render ${++renders}</p>`,
      },
      { reportIntervalMs: 2_000, statsIntervalMs: 5_000 },
    );
    const base = await serveLiveFeed(feed, cleanups);
    const page = await client(`${base}?view=report`);
    const tail = await client(base);
    await eventually(
      () => page.frames.length >= 2 && tail.frames.some((f) => f.type === 'stats'),
      5_000,
      'the first frames',
    );
    expect(page.frames.map((f) => f.type)).toEqual(['hello', 'report']);
    expect(page.frames[1]!.html).toBe('<p>render 1</p>');
    // nothing rendered for the tail client; a source change reaches it and not the page
    feed.apply({ kind: 'source-health', ts: now, source: 'relay:ctx0', up: false, error: 'down' });
    await eventually(() => tail.frames.some((f) => f.type === 'source'), 5_000, 'the source frame');
    // ticks: a report every reportIntervalMs while the page is connected
    now += 1_000;
    feed.tick();
    now += 1_000;
    feed.tick();
    now += 2_000;
    feed.tick();
    await eventually(() => page.frames.filter((f) => f.type === 'report').length === 3, 5_000, 'two more reports');
    expect(page.frames.map((f) => f.type)).toEqual(['hello', 'report', 'report', 'report']);
    expect(tail.frames.some((f) => f.type === 'report')).toBe(false);
    // no page connected: nothing is rendered
    page.ws.close();
    await eventually(() => feed.clients === 1, 5_000, 'the page to leave');
    const before = renders;
    now += 10_000;
    feed.tick();
    expect(renders).toBe(before);
    tail.ws.close();
  });
});
